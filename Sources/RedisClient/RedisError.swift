/// Why a Redis command has no reply value: the module's one error type, handed out as a value
/// (`Result<RedisValue, RedisError>` per command).
public enum RedisError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No connection: connecting failed, or the connection broke (I/O error, EOF, timeout).
    /// A command that was already written may or may not have run.
    case unreachable(String)
    /// The server sent something hiredis could not parse, or a reply of an unexpected shape.
    case protocolError(String)
    /// The server answered with an error reply, e.g. `ERR unknown command` or a Lua script's
    /// error (`ERR user_script:…`, or what the script returned with `redis.error_reply`).
    case errorReply(String)

    public var description: String {
        switch self {
        case .unreachable(let reason): "redis unreachable: \(reason)"
        case .protocolError(let reason): "redis protocol error: \(reason)"
        case .errorReply(let message): "redis error reply: \(message)"
        }
    }

    /// Whether this is an error a Lua script raised (or that the scripting engine reported).
    public var isScriptError: Bool {
        guard case .errorReply(let message) = self else { return false }
        return message.contains("script") || message.hasPrefix("NOSCRIPT")
    }
}
