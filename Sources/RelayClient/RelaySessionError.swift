import RelayProtocol

/// Why a session call failed (WatchConnectivity's `WCError`, plus the relay's own codes).
public enum RelaySessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `activate()` has not completed (WC: sessionNotActivated, 7004).
    case notActivated
    /// The device is not paired (WC: deviceNotPaired, 7005).
    case notPaired
    /// The counterpart is not reachable for live messaging (WC: notReachable, 7007).
    case notReachable
    /// No reply within the relay's reply timeout (WC: messageReplyTimedOut, 7012).
    case replyTimeout
    /// The payload is over the mode's limit (WC: payloadTooLarge, 7009).
    case payloadTooLarge(size: Int, limit: Int)
    /// The payload nests objects and arrays deeper than a frame may carry (PROTOCOL.md §3.1; WC:
    /// payloadUnsupportedTypes, 7010). Refused before it goes out: the relay could not read the
    /// frame, so it could not say which request failed, and the call would wait for its timeout.
    case payloadTooDeep(depth: Int, limit: Int)
    /// The call does not apply to this device or item (WC: sessionNotSupported, 7002).
    case notSupported(String)
    /// The connection to the relay dropped before the answer came.
    case disconnected
    /// The relay did not answer in time.
    case timeout(String)
    /// The relay refused the frame with this protocol error.
    case relay(code: ErrorCode, message: String)
    /// The session's own state could not be saved (the item it concerned is not acked).
    case persistFailed(String)
    /// Another connection with this device's identity replaced this session's (close 4001: a
    /// second process on its state directory, `watchrelay pair` run again on it). The session
    /// does not connect again: two would take turns replacing each other.
    case replaced

    /// The nearest `WCErrorCode`, when there is one.
    public var wcCode: Int? {
        switch self {
        case .notActivated: return 7004
        case .notPaired: return 7005
        case .notReachable: return 7007
        case .replyTimeout: return 7012
        case .payloadTooLarge: return 7009
        case .payloadTooDeep: return 7010
        case .notSupported: return 7002
        case .relay(let code, _): return code.wcCode
        default: return nil
        }
    }

    /// Maps the relay's `error` frame to the session error a WC developer expects.
    init(_ e: ErrorFrame) {
        switch e.code {
        case .notPaired: self = .notPaired
        case .notReachable: self = .notReachable
        case .replyTimeout: self = .replyTimeout
        case .notSupported: self = .notSupported(e.message)
        default: self = .relay(code: e.code, message: e.message)
        }
    }

    public var description: String {
        switch self {
        case .notActivated: return "the session is not activated"
        case .notPaired: return "the device is not paired"
        case .notReachable: return "the counterpart is not reachable"
        case .replyTimeout: return "no reply within the reply timeout"
        case .payloadTooLarge(let size, let limit): return "payload of \(size) bytes is over the limit of \(limit)"
        case .payloadTooDeep(let depth, let limit):
            return "payload nests \(depth) levels of objects and arrays, more than the \(limit) a frame can carry"
        case .notSupported(let why): return "not supported: \(why)"
        case .disconnected: return "disconnected from the relay"
        case .timeout(let what): return "timed out waiting for \(what)"
        case .relay(let code, let message): return "\(code): \(message)"
        case .persistFailed(let why): return "could not save the session state: \(why)"
        case .replaced:
            return "another process connected to the relay as this device (the same state directory), and the relay "
                + "closed this connection for it; this session does not connect again"
        }
    }
}

extension RelaySessionError {
    /// The short machine-readable code of the error, the same for the phone's and the watch's
    /// `error` events and answers (Simulator/README.md): the relay's protocol error code
    /// (PROTOCOL.md §11) when the relay refused a frame, else the session's own.
    public var code: String {
        switch self {
        case .notActivated: "not_activated"
        case .notPaired: "not_paired"
        case .notReachable: "not_reachable"
        case .replyTimeout: "reply_timeout"
        case .payloadTooLarge: "payload_too_large"
        case .payloadTooDeep: "payload_too_deep"
        case .notSupported: "not_supported"
        case .disconnected: "disconnected"
        case .timeout: "timeout"
        case .relay(let code, _): code.rawValue
        case .persistFailed: "persist_failed"
        case .replaced: "replaced"
        }
    }
}
