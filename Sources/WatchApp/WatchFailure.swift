import RelayClient

/// Something that failed on the watch, as its ``WatchEvent/error(_:)`` event tells it: where it
/// came from, a short machine-readable code, and a line for people (the phone's errors carry
/// the same three).
public struct WatchFailure: Sendable, Hashable, CustomStringConvertible {
    /// Where it came from: `relay` (the session with the relay), `phone` (what the phone sent)
    /// or `store` (the watch's own store).
    public var source: String
    /// A short machine-readable code: the relay's protocol error code when it refused a frame
    /// (``code(of:)``), `invalid_payload`, `store_failed`, `unpaired`.
    public var code: String
    /// What failed, in words.
    public var message: String

    public var description: String { message }

    /// The watch's own store failed.
    static func storeFailed(_ message: String) -> WatchFailure {
        WatchFailure(source: "store", code: "store_failed", message: message)
    }

    /// A payload from the phone the watch cannot read (`message` says which and why).
    static func invalidPayload(_ message: String) -> WatchFailure {
        WatchFailure(source: "phone", code: "invalid_payload", message: message)
    }

    /// An error of the session with the relay, its text after `context` (e.g. `session: …`);
    /// code `failed` for one that is not a ``RelaySessionError``.
    public static func relay(_ error: any Error, _ context: String) -> WatchFailure {
        let code = (error as? RelaySessionError).map(code(of:)) ?? "failed"
        return WatchFailure(source: "relay", code: code, message: "\(context): \(error)")
    }

    /// The short code of a session error (the machine protocol's, Simulator/README.md): the
    /// relay's protocol error code (PROTOCOL.md §9) when the relay refused a frame.
    public static func code(of error: RelaySessionError) -> String {
        switch error {
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
        }
    }
}
