import Foundation
import RelayClient
import RelayProtocol

/// Which device this process is and how it reaches the relay: read from the environment, so
/// one source file serves the phone app and the watch app.
///
/// | Variable | Meaning |
/// | --- | --- |
/// | `WATCHRELAY_URL` | the relay, `ws://host:port/v1` (required) |
/// | `WATCHRELAY_ROLE` | `phone` or `watch` (required) |
/// | `WATCHRELAY_STATE` | the device's state directory, paired by `watchrelay pair` (required) |
/// | `WATCHRELAY_DEVICE_NAME` | shown to the counterpart (default "iPhone" / "Apple Watch") |
/// | `WATCHRELAY_FOREGROUND` | watch only: `0` starts the app in the background (default `1`) |
/// | `WATCHRELAY_COMPLICATION` | phone only (it is the phone's `isComplicationEnabled`): `0` when the watch face does not show the app's complication (default `1`) |
/// | `WATCHRELAY_REQUEST_TIMEOUT_S` | how long activation and each request wait for the relay, in seconds (default 10; raise it on a slow CI machine) |
public struct WCSessionEnvironment: Sendable, Hashable {
    /// The relay's URL.
    public var url: String
    /// The side this process plays.
    public var role: Role
    /// The state directory (token, pair, queued transfers).
    public var stateDirectory: String
    /// The device name shown to the counterpart.
    public var deviceName: String
    /// Watch: whether the app is in the foreground (reachable for the phone's messages).
    public var foreground: Bool
    /// Phone: whether the watch app's complication is enabled.
    public var complicationEnabled: Bool
    /// How long activation and each request wait for the relay, in seconds.
    public var requestTimeoutSeconds: Double

    /// Reads the variables from `environment`; `nil` when one of the required ones is missing,
    /// `WATCHRELAY_URL` is not a `ws://` or `wss://` URL, or `WATCHRELAY_ROLE` is neither
    /// `phone` nor `watch` (then `isSupported()` is false).
    public init?(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let url = environment["WATCHRELAY_URL"], !url.isEmpty, Self.isWebSocketURL(url),
            let state = environment["WATCHRELAY_STATE"], !state.isEmpty,
            let role = environment["WATCHRELAY_ROLE"].flatMap(Self.role(named:))
        else { return nil }
        self.url = url
        self.role = role
        self.stateDirectory = state
        self.deviceName = environment["WATCHRELAY_DEVICE_NAME"] ?? (role == .phone ? "iPhone" : "Apple Watch")
        self.foreground = environment["WATCHRELAY_FOREGROUND"] != "0"
        self.complicationEnabled = environment["WATCHRELAY_COMPLICATION"] != "0"
        self.requestTimeoutSeconds = RelaySessionConfiguration.requestTimeout(from: environment)
    }

    /// Why `environment` selects no device (what ``init(_:)`` returns `nil` for), or `nil`
    /// when it does: for the one line `WCSession.isSupported()` writes to standard error.
    public static func problem(in environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var missing: [String] = []
        for name in ["WATCHRELAY_URL", "WATCHRELAY_ROLE", "WATCHRELAY_STATE"] where (environment[name] ?? "").isEmpty {
            missing.append(name)
        }
        if !missing.isEmpty { return "\(missing.joined(separator: ", ")) not set" }
        if let url = environment["WATCHRELAY_URL"], !isWebSocketURL(url) {
            // An http:// URL (the console's, say) could never connect: the session retried for ever.
            return "WATCHRELAY_URL is '\(url)', not a ws:// or wss:// URL"
        }
        if let role = environment["WATCHRELAY_ROLE"], Self.role(named: role) == nil {
            return "WATCHRELAY_ROLE is '\(role)', not phone or watch"
        }
        return nil
    }

    /// Whether `url` starts with `ws://` or `wss://` (any case) and names a host.
    private static func isWebSocketURL(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else { return false }
        return (scheme == "ws" || scheme == "wss") && !(components.host ?? "").isEmpty
    }

    private static func role(named name: String) -> Role? {
        switch name.lowercased() {
        case "phone", "ios": return .phone
        case "watch", "watchos": return .watch
        default: return nil
        }
    }
}
