/// One Redis reply (RESP2), copied out of hiredis.
public enum RedisValue: Hashable, Sendable {
    /// A bulk string: arbitrary bytes.
    case bulk([UInt8])
    /// A simple status such as `OK` or `QUEUED`.
    case status(String)
    case integer(Int64)
    case array([RedisValue])
    /// The null bulk string or null array.
    case null

    /// The bytes of a bulk string or status as UTF-8 text (nil for other replies).
    public var text: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let status): status
        default: nil
        }
    }

    /// An integer, or a bulk string holding a decimal integer (nil otherwise).
    public var integer: Int64? {
        switch self {
        case .integer(let n): n
        case .bulk: text.flatMap { Int64($0) }
        default: nil
        }
    }

    /// The elements of an array (nil for other replies).
    public var elements: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}

/// One command, as its arguments (binary-safe); encoded as RESP when it is sent.
public struct RedisCommand: Hashable, Sendable {
    /// The command name and its arguments.
    public var arguments: [[UInt8]]

    /// A command from text arguments: `RedisCommand("SET", "k", "v")`.
    public init(_ arguments: String...) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command from text arguments.
    public init(_ arguments: [String]) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command from binary arguments.
    public init(arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The command as a RESP array of bulk strings.
    var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + arguments.reduce(0) { $0 + $1.count + 16 })
        out.append(UInt8(ascii: "*"))
        out.append(contentsOf: String(arguments.count).utf8)
        out.append(contentsOf: [13, 10])
        for argument in arguments {
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(argument.count).utf8)
            out.append(contentsOf: [13, 10])
            out.append(contentsOf: argument)
            out.append(contentsOf: [13, 10])
        }
        return out
    }
}
