import RelayClient

/// Something that failed on the watch, as its ``WatchEvent/error(_:)`` event tells it: where it
/// came from, a short machine-readable code, and a line for people (the phone's errors carry
/// the same three).
public struct WatchFailure: Sendable, Hashable, CustomStringConvertible {
    /// Where it came from: `relay` (the session with the relay), `phone` (what the phone sent)
    /// or `store` (the watch's own store).
    public var source: String
    /// A short machine-readable code: the relay's protocol error code when it refused a frame
    /// (``RelaySessionError/code``), `invalid_payload`, `store_failed`, `unpaired`.
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
        let code = (error as? RelaySessionError)?.code ?? "failed"
        return WatchFailure(source: "relay", code: code, message: "\(context): \(error)")
    }
}
