import Foundation

/// The error domain of every ``WCError`` (`"WCErrorDomain"`), as in Apple's SDK.
public let WCErrorDomain = "WCErrorDomain"

/// WatchConnectivity's error: one of Apple's codes (7001–7019) in ``WCErrorDomain``.
///
/// Match it the way Apple's bridged error is matched: `catch WCError.notReachable`,
/// `(error as? WCError)?.code == .payloadTooLarge`, or through `NSError` (`domain`, `code`).
public struct WCError: Error, Hashable, Sendable, CustomNSError, LocalizedError {
    /// Apple's `WCErrorCode` values.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// An unknown problem.
        case genericError = 7001
        /// This device does not support sessions.
        case sessionNotSupported = 7002
        /// The session has no delegate.
        case sessionMissingDelegate = 7003
        /// The session (or the counterpart's) is not activated.
        case sessionNotActivated = 7004
        /// No paired device.
        case deviceNotPaired = 7005
        /// The watch app is not installed on the paired watch.
        case watchAppNotInstalled = 7006
        /// The counterpart is not available for live messaging.
        case notReachable = 7007
        /// A parameter was invalid.
        case invalidParameter = 7008
        /// The payload is over the size limit of its kind of transfer.
        case payloadTooLarge = 7009
        /// The payload holds a value that is not a property-list type.
        case payloadUnsupportedTypes = 7010
        /// The reply could not be returned.
        case messageReplyFailed = 7011
        /// The counterpart did not reply within the allowed time.
        case messageReplyTimedOut = 7012
        /// The file could not be read.
        case fileAccessDenied = 7013
        /// The payload could not be delivered.
        case deliveryFailed = 7014
        /// Not enough space for the transfer.
        case insufficientSpace = 7015
        /// The session is inactive: no new transfers.
        case sessionInactive = 7016
        /// The transfer did not complete in time.
        case transferTimedOut = 7017
        /// The companion app is not installed.
        case companionAppNotInstalled = 7018
        /// The watch app has no companion app.
        case watchOnlyApp = 7019
    }

    /// Which error it is.
    public let code: Code
    /// A sentence for people (`NSLocalizedDescriptionKey`).
    private let message: String

    /// An error with `code`; `userInfo[NSLocalizedDescriptionKey]` (a `String`) replaces the
    /// default description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.message = userInfo[NSLocalizedDescriptionKey] as? String ?? code.defaultDescription
    }

    /// `"WCErrorDomain"`.
    public static var errorDomain: String { WCErrorDomain }
    /// The raw code (7001…).
    public var errorCode: Int { code.rawValue }
    /// `NSLocalizedDescriptionKey`: the description.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    /// The description, for `LocalizedError`.
    public var errorDescription: String? { message }
    /// What Apple's bridged `WCError` answers (an `NSError`'s `userInfo`): here only
    /// `NSLocalizedDescriptionKey`.
    public var userInfo: [String: Any] { errorUserInfo }

    public static func == (a: WCError, b: WCError) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static var genericError: Code { .genericError }
    public static var sessionNotSupported: Code { .sessionNotSupported }
    public static var sessionMissingDelegate: Code { .sessionMissingDelegate }
    public static var sessionNotActivated: Code { .sessionNotActivated }
    public static var deviceNotPaired: Code { .deviceNotPaired }
    public static var watchAppNotInstalled: Code { .watchAppNotInstalled }
    public static var notReachable: Code { .notReachable }
    public static var invalidParameter: Code { .invalidParameter }
    public static var payloadTooLarge: Code { .payloadTooLarge }
    public static var payloadUnsupportedTypes: Code { .payloadUnsupportedTypes }
    public static var messageReplyFailed: Code { .messageReplyFailed }
    public static var messageReplyTimedOut: Code { .messageReplyTimedOut }
    public static var fileAccessDenied: Code { .fileAccessDenied }
    public static var deliveryFailed: Code { .deliveryFailed }
    public static var insufficientSpace: Code { .insufficientSpace }
    public static var sessionInactive: Code { .sessionInactive }
    public static var transferTimedOut: Code { .transferTimedOut }
    public static var companionAppNotInstalled: Code { .companionAppNotInstalled }
    public static var watchOnlyApp: Code { .watchOnlyApp }
}

extension WCError.Code {
    /// Apple's wording, shortened.
    var defaultDescription: String {
        switch self {
        case .genericError: return "WatchConnectivity session error."
        case .sessionNotSupported: return "WatchConnectivity session is not supported on this device."
        case .sessionMissingDelegate: return "WatchConnectivity session has no delegate."
        case .sessionNotActivated: return "WatchConnectivity session has not been activated."
        case .deviceNotPaired: return "The device is not paired."
        case .watchAppNotInstalled: return "The watch app is not installed."
        case .notReachable: return "WatchConnectivity session on paired device is not reachable."
        case .invalidParameter: return "An invalid parameter was passed."
        case .payloadTooLarge: return "Payload is too large."
        case .payloadUnsupportedTypes: return "Payload contains unsupported type."
        case .messageReplyFailed: return "Message reply failed."
        case .messageReplyTimedOut: return "Message reply took too long."
        case .fileAccessDenied: return "Permission denied for the file."
        case .deliveryFailed: return "Payload could not be delivered."
        case .insufficientSpace: return "Insufficient space."
        case .sessionInactive: return "WatchConnectivity session is inactive."
        case .transferTimedOut: return "The transfer timed out."
        case .companionAppNotInstalled: return "The companion app is not installed."
        case .watchOnlyApp: return "The watch app is a watch-only app."
        }
    }
}

/// `catch WCError.notReachable`: a code matches an error with that code, a ``WCError`` or an
/// `NSError` in ``WCErrorDomain`` (a test fake's `NSError(domain: WCErrorDomain, code: 7007)`,
/// or a `WCError` that went through `as NSError`), as Apple's bridged error matches both.
/// `as? WCError` can't take such an `NSError` on Linux (README, "What differs").
public func ~= (code: WCError.Code, error: any Error) -> Bool {
    if let error = error as? WCError { return error.code == code }
    let bridged = error as NSError
    return bridged.domain == WCErrorDomain && bridged.code == code.rawValue
}
