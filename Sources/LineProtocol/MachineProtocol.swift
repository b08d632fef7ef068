import Foundation
import Primitives
import RelayProtocol

/// The `--machine` line protocol of `watchrelay phone` and `watchrelay watch`
/// (Simulator/README.md, "The line protocol"): one request per stdin line, one JSON object per
/// stdout line.
///
/// A request is either the console's words (`add octocat`) or a JSON object
/// `{"id": 7, "command": "add", "args": ["octocat"]}` (a line that is any other JSON value is
/// bad input). Every request gets exactly one
/// `{"type": "response", "id": 7, "command": "add", "ok": true, …}` line, or
/// `"ok": false` with `"error": {"code": …, "message": …}`; bad input is such an error
/// (code `bad_request`) and the process keeps running. Events are
/// `{"type": "event", "event": "reloaded", …}` lines; the first line is `{"type": "ready", …}`.
///
/// Both halves use these types: the child (`watchrelay phone|watch --machine`) parses requests
/// and writes responses and events; the simulator's `MachineChannel` writes requests
/// (``requestLine(id:command:args:)``) and reads the child's lines (``Output``).
public enum MachineProtocol {
    /// A request: the id to echo (any JSON value, absent for a words line) and its words.
    public struct Request: Sendable {
        public var id: JSONValue?
        public var words: [String]
        /// The command's name (its first word), lowercased.
        public var verb: String { words.first?.lowercased() ?? "" }

        /// A request with `id` (nil for a words line) and `words` (the command, then its arguments).
        public init(id: JSONValue?, words: [String]) {
            self.id = id
            self.words = words
        }
    }

    /// Input that is not a request: answered with a `bad_request` response.
    public struct BadRequest: Error, Sendable {
        public var id: JSONValue?
        /// The request's command when it could be read (its `args` were wrong), lowercased.
        public var command: String? = nil
        public var message: String
    }

    /// Parses one stdin line; `nil` for a blank line or a `#` comment.
    public static func parse(_ line: String) -> Result<Request, BadRequest>? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        // A line that is JSON is a JSON request, whatever value it holds: `"str"`, `42` or
        // `true` were read as console words (`unknown command '"str"'`). No console word is JSON.
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(trimmed.utf8))
        } catch {
            guard trimmed.hasPrefix("{") || trimmed.hasPrefix("[") else {
                return .success(Request(id: nil, words: trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)))
            }
            return .failure(BadRequest(id: nil, message: "not JSON: \(error)"))
        }
        guard let object = value.objectValue else {
            return .failure(BadRequest(id: nil, message: "a request must be a JSON object"))
        }
        let id = object["id"]
        guard let command = object["command"]?.stringValue, !command.isEmpty else {
            return .failure(BadRequest(id: id, message: "a request needs a \"command\" string"))
        }
        var words = [command]
        let name = command.lowercased()
        if let args = object["args"], args.arrayValue == nil {
            return .failure(BadRequest(id: id, command: name, message: "\"args\" must be an array"))
        }
        for arg in object["args"]?.arrayValue ?? [] {
            switch arg {
            case .string(let s): words.append(s)
            case .int(let i): words.append(String(i))
            case .double(let d): words.append(String(d))
            case .bool(let b): words.append(String(b))
            default:
                return .failure(BadRequest(id: id, command: name, message: "\"args\" must hold strings or numbers"))
            }
        }
        return .success(Request(id: id, words: words))
    }

    /// `{"type": "response", "ok": true, …fields}` for `request`.
    public static func ok(_ request: Request, _ fields: [String: JSONValue] = [:]) -> String {
        var object = fields
        object["type"] = "response"
        object["ok"] = true
        object["command"] = .string(request.verb)
        if let id = request.id { object["id"] = id }
        return line(object)
    }

    /// `{"type": "response", "ok": false, "error": {"code", "message", "source"?}}`; a `command`
    /// of megabytes (an unknown one a script sent by mistake) is echoed cut (``Excerpt``).
    public static func failure(
        id: JSONValue?, command: String?, code: String, message: String, source: String? = nil
    ) -> String {
        var error: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        if let source { error["source"] = .string(source) }
        var object: [String: JSONValue] = [
            "type": "response", "ok": false, "command": command.map { .string(Excerpt.of($0)) } ?? .null,
            "error": .object(error),
        ]
        if let id { object["id"] = id }
        return line(object)
    }

    /// The answer to input that is not a request (naming its command when it had one).
    public static func failure(_ bad: BadRequest) -> String {
        failure(id: bad.id, command: bad.command, code: "bad_request", message: bad.message)
    }

    /// `{"type": "event", "event": name, …fields}`.
    public static func event(_ name: String, _ fields: [String: JSONValue] = [:]) -> String {
        var object = fields
        object["type"] = "event"
        object["event"] = .string(name)
        return line(object)
    }

    /// `{"type": "ready", "role": role, …fields}`: the first line, once the device started.
    public static func ready(role: String, _ fields: [String: JSONValue]) -> String {
        var object = fields
        object["type"] = "ready"
        object["role"] = .string(role)
        return line(object)
    }

    /// One compact JSON line (keys sorted).
    public static func line(_ object: [String: JSONValue]) -> String {
        String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self)
    }

    /// Strings as a JSON array.
    public static func strings(_ values: [String]) -> JSONValue {
        .array(values.map(JSONValue.string))
    }

    /// The members of an object value (empty for anything else), to merge a renderer's output into a line.
    public static func members(_ value: JSONValue) -> [String: JSONValue] {
        value.objectValue ?? [:]
    }
}
