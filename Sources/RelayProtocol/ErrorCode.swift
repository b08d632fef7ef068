/// A protocol error code, carried by the `error` frame.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let helloRequired = ErrorCode(rawValue: "hello_required")
    public static let alreadyHello = ErrorCode(rawValue: "already_hello")
    public static let unsupportedProtocol = ErrorCode(rawValue: "unsupported_protocol")
    public static let badJSON = ErrorCode(rawValue: "bad_json")
    public static let badFrame = ErrorCode(rawValue: "bad_frame")
    public static let unknownType = ErrorCode(rawValue: "unknown_type")
    public static let unsupportedFrame = ErrorCode(rawValue: "unsupported_frame")
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    public static let notPaired = ErrorCode(rawValue: "not_paired")
    public static let notReachable = ErrorCode(rawValue: "not_reachable")
    public static let replyTimeout = ErrorCode(rawValue: "reply_timeout")
    public static let notSupported = ErrorCode(rawValue: "not_supported")
    public static let alreadyDelivered = ErrorCode(rawValue: "already_delivered")
    public static let unknownID = ErrorCode(rawValue: "unknown_id")
    public static let pairingCodeInvalid = ErrorCode(rawValue: "pairing_code_invalid")
    public static let pairingCodeExpired = ErrorCode(rawValue: "pairing_code_expired")
    public static let pairingLocked = ErrorCode(rawValue: "pairing_locked")
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    /// A durable send over a queue quota, or a connection over a connection quota (§9).
    public static let quotaExceeded = ErrorCode(rawValue: "quota_exceeded")
    public static let `internal` = ErrorCode(rawValue: "internal")
    /// A phone's `send` while its watch's app is uninstalled (PROTOCOL.md §7.1).
    public static let watchAppNotInstalled = ErrorCode(rawValue: "watch_app_not_installed")
    /// A watch's `send` while its phone's app is uninstalled (PROTOCOL.md §7.1).
    public static let companionAppNotInstalled = ErrorCode(rawValue: "companion_app_not_installed")

    /// Every code protocol v1 defines.
    public static let all: [ErrorCode] = [
        .helloRequired, .alreadyHello, .unsupportedProtocol, .badJSON, .badFrame, .unknownType, .unsupportedFrame,
        .payloadTooLarge, .unauthorized, .notPaired, .notReachable, .replyTimeout, .notSupported, .alreadyDelivered,
        .unknownID, .pairingCodeInvalid, .pairingCodeExpired, .pairingLocked, .rateLimited, .quotaExceeded, .internal,
        .watchAppNotInstalled, .companionAppNotInstalled,
    ]

    /// The nearest `WCErrorCode` (WatchConnectivity), if there is one.
    public var wcCode: Int? {
        switch self {
        case .internal: return 7001  // genericError
        case .notSupported: return 7002  // sessionNotSupported
        case .notPaired: return 7005  // deviceNotPaired
        case .watchAppNotInstalled: return 7006  // watchAppNotInstalled
        case .notReachable: return 7007  // notReachable
        case .payloadTooLarge: return 7009  // payloadTooLarge
        case .replyTimeout: return 7012  // messageReplyTimedOut
        case .quotaExceeded: return 7015  // insufficientSpace
        case .companionAppNotInstalled: return 7018  // companionAppNotInstalled
        default: return nil
        }
    }
}

/// A frame that the relay (or a client) cannot accept, with the protocol's error code.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The wire error code.
    public var code: ErrorCode
    /// The offending field's path (`payload.kind`), if one field is to blame.
    public var field: String?
    /// What was wrong, for humans.
    public var message: String
    /// The `id` of the offending frame, when it could be read (becomes `re` on the wire).
    public var re: String?

    public init(_ code: ErrorCode, field: String? = nil, _ message: String, re: String? = nil) {
        self.code = code
        self.field = field
        self.message = message
        self.re = re
    }

    public var description: String { "\(code): \(message)" }

    /// The `error` frame that reports this error.
    public var frame: ErrorFrame {
        ErrorFrame(re: re, code: code, message: message, wcCode: code.wcCode)
    }
}
