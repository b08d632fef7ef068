/// `serve --console`: the token every console request must carry, and the interface rule.
public struct ConsoleConfiguration: Sendable, Equatable {
    /// The secret of `?token=` or `Authorization: Bearer`.
    public var token: String
    /// Serve the console on a non-loopback interface without TLS (`--console-allow-insecure`).
    public var allowsInsecureInterface: Bool
    /// The most event streams (`/console/api/events`, one per open page) served at once; one
    /// more is answered 503. Each may hold up to 4 MiB (`HTTPStream.maxPending`) for a
    /// reader that stopped reading, so this bounds what pages can cost the relay (64 MiB).
    public var maxEventStreams: Int
    /// Milliseconds an event stream goes without a byte before it gets a heartbeat
    /// (``ConsoleEvents``): how soon a stream whose page went away is noticed.
    public var heartbeatMilliseconds: Int64

    /// A console with a fresh random token (or the one given).
    public init(
        token: String? = nil, allowsInsecureInterface: Bool = false, maxEventStreams: Int = 16,
        heartbeatMilliseconds: Int64 = 15_000
    ) {
        self.token = token ?? Self.randomToken()
        self.allowsInsecureInterface = allowsInsecureInterface
        self.maxEventStreams = maxEventStreams
        self.heartbeatMilliseconds = heartbeatMilliseconds
    }

    /// 32 lowercase hex digits from the system's random source.
    public static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        return String((0..<32).map { _ in hex[Int(g.next() & 15)] })
    }

    /// Refuses a non-loopback interface without TLS unless explicitly allowed: the token
    /// would cross the network in clear text.
    public func check(host: String, tls: Bool) throws(ConsoleError) {
        if tls || allowsInsecureInterface || Self.isLoopback(host) { return }
        throw ConsoleError.insecureInterface(host)
    }

    /// Whether `host` names the loopback interface (`127.0.0.0/8`, `::1`, `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// `http(s)://host:port/console?token=TOKEN`: the line `serve --console` prints.
    public func url(host: String, port: Int, tls: Bool) -> String {
        "\(tls ? "https" : "http")://\(Self.urlHost(host)):\(port)/console?token=\(token)"
    }

    /// `host` as a URL's host: an IPv6 address (it has colons) in brackets (RFC 3986 §3.2.2).
    public static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}

/// Why the console could not start.
public enum ConsoleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A non-loopback interface without TLS, not explicitly allowed.
    case insecureInterface(String)

    public var description: String {
        switch self {
        case .insecureInterface(let host):
            return "the console's token would cross the network in clear text on \(host): "
                + "serve it on 127.0.0.1, give --tls-cert/--tls-key, or pass --console-allow-insecure"
        }
    }
}
