import Foundation
import RelayProtocol

/// How a ``RelaySession`` reaches the relay and where it keeps its state.
public struct RelaySessionConfiguration: Sendable {
    /// `ws://host:port/v1` or `wss://…`.
    public var url: String
    public var role: Role
    /// Shown to the counterpart.
    public var deviceName: String
    /// Directory for `session.db` (token, pair, last seq); created if missing.
    public var stateDirectory: String
    /// Watch only: whether the app starts in the foreground. Default true.
    public var foreground: Bool
    /// Reconnect delays in seconds (the last repeats), each with ±20 % jitter.
    public var backoff: [Double]
    /// How long `activate()` and requests wait for the relay. Default 10 s, or
    /// `WATCHRELAY_REQUEST_TIMEOUT_S` from the environment (see ``requestTimeout(from:)``).
    public var requestTimeoutSeconds: Double
    /// Accept a self-signed certificate for `wss://` (tests, local relays).
    public var allowSelfSigned: Bool

    public init(
        url: String, role: Role, deviceName: String, stateDirectory: String, foreground: Bool = true,
        backoff: [Double] = [0.05, 0.2, 0.5, 1, 2, 5], requestTimeoutSeconds: Double = RelaySessionConfiguration.requestTimeout(),
        allowSelfSigned: Bool = false
    ) {
        self.url = url
        self.role = role
        self.deviceName = deviceName
        self.stateDirectory = stateDirectory
        self.foreground = foreground
        self.backoff = backoff
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.allowSelfSigned = allowSelfSigned
    }

    /// The request timeouts a session accepts, in seconds: those of the CLI's `--*-timeout-s`
    /// options. Whoever turns one into milliseconds (`Int64(s * 1000)`) can then not trap.
    public static let requestTimeoutRange: ClosedRange<Double> = 0.001...86_400

    /// The default request timeout: `WATCHRELAY_REQUEST_TIMEOUT_S` in `environment` when it is a
    /// positive number of seconds (raise it on a slow or loaded CI machine), kept within
    /// ``requestTimeoutRange`` (`1e300` waits a day, not for ever: as milliseconds it overflowed
    /// an integer and stopped the process); else 10.
    public static func requestTimeout(
        from environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Double {
        guard let value = environment["WATCHRELAY_REQUEST_TIMEOUT_S"].flatMap(Double.init), value.isFinite, value > 0
        else { return 10 }
        return clampedTimeout(value)
    }

    /// `seconds` within ``requestTimeoutRange`` (the session's settings clamp the configured
    /// value too: one set in code skips the parser); not a number: 10.
    static func clampedTimeout(_ seconds: Double) -> Double {
        guard !seconds.isNaN else { return 10 }
        return min(max(seconds, requestTimeoutRange.lowerBound), requestTimeoutRange.upperBound)
    }
}

/// `WCSessionActivationState`.
public enum ActivationState: Sendable, Hashable {
    /// Not activated, or activating.
    case notActivated
    /// Was activated; the connection dropped and the session is reconnecting.
    case inactive
    /// Connected with a `welcome`: sends are allowed.
    case activated
}
