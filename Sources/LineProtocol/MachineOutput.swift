import RelayProtocol

extension MachineProtocol {
    /// One line a `--machine` child printed, as its reader sees it.
    public enum Output: Sendable, Equatable {
        /// The first line, once the device started: all of its fields.
        case ready([String: JSONValue])
        /// The answer to the request whose id is `id` (as a string: `7` and `"7"` are the same
        /// request; nil for an answer to input without an id), with all of its fields.
        case response(id: String?, [String: JSONValue])
        /// An event: its name and all of its fields.
        case event(String, [String: JSONValue])
        /// A JSON object of another type (a newer child): nothing to do with it.
        case other([String: JSONValue])

        /// Reads one stdout line; nil if it is not a JSON object (a crash message, say).
        public init?(line: String) {
            guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return nil }
            switch object["type"]?.stringValue {
            case "ready":
                self = .ready(object)
            case "event":
                self = .event(object["event"]?.stringValue ?? "", object)
            case "response":
                switch object["id"] {
                case .int(let n)?: self = .response(id: String(n), object)
                case .string(let s)?: self = .response(id: s, object)
                default: self = .response(id: nil, object)
                }
            default:
                self = .other(object)
            }
        }
    }

    /// The JSON request line `{"id": id, "command": command, "args": [args…]}` (what the
    /// simulator writes to a child's stdin; ``parse(_:)`` reads it back).
    public static func requestLine(id: Int, command: String, args: [String]) -> String {
        line(["id": .int(Int64(id)), "command": .string(command), "args": strings(args)])
    }
}
