import RedisClient

/// Why the Redis store failed: the module's one error type.
public enum RedisRelayStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Redis could not be reached, or its connection broke (the batch may be retried as is).
    case unreachable(String)
    /// Redis answered with an error (a script error, out of memory, a read-only replica, …).
    case rejected(String)
    /// The batch carried an epoch that is no longer the leader's: another node took over, and
    /// this one must stop committing (nothing of the batch was applied).
    case fenced(String)
    /// A reply had an unexpected shape.
    case unexpectedReply(String)
    /// A stored value could not be decoded (`key` names where).
    case corruptValue(key: String, reason: String)

    init(_ error: RedisError) {
        switch error {
        case .unreachable(let reason): self = .unreachable(reason)
        case .errorReply(let message):
            self = message.contains("watchrelay: fenced") ? .fenced(message) : .rejected(message)
        case .protocolError(let reason): self = .unexpectedReply(reason)
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "redis store unreachable: \(reason)"
        case .rejected(let message): "redis store rejected the batch: \(message)"
        case .fenced(let message): "redis store refused a deposed leader's batch: \(message)"
        case .unexpectedReply(let reason): "redis store got an unexpected reply: \(reason)"
        case .corruptValue(let key, let reason): "redis store value at \(key) is corrupt: \(reason)"
        }
    }
}
