/// Where a Redis server is: `redis://HOST:PORT[/DB]`.
public struct RedisEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The logical database (`SELECT`), 0 by default.
    public var database: Int

    public init(host: String, port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses `redis://HOST[:PORT][/DB]` (port 6379 and database 0 by default).
    ///
    /// - Throws: ``RedisEndpointError`` naming what is wrong (scheme, host, port or database).
    public init(url: String) throws(RedisEndpointError) {
        let scheme = "redis://"
        guard url.hasPrefix(scheme) else { throw .init(url: url, reason: "it must start with redis://") }
        var rest = Substring(url.dropFirst(scheme.count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let n = Int(db), n >= 0 else { throw .init(url: url, reason: "the database must be a number ≥ 0") }
                database = n
            }
            rest = rest[..<slash]
        }
        var port = 6379
        if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                throw .init(url: url, reason: "the port must be 1–65535")
            }
            port = p
            rest = rest[..<colon]
        }
        guard !rest.isEmpty, !rest.contains("@") else {
            throw .init(url: url, reason: "it needs a host (user names and passwords are not supported)")
        }
        self.init(host: String(rest), port: port, database: database)
    }

    public var description: String { "redis://\(host):\(port)/\(database)" }
}

/// A `redis://` URL that could not be parsed.
public struct RedisEndpointError: Error, Hashable, Sendable, CustomStringConvertible {
    public var url: String
    public var reason: String
    public var description: String { "invalid Redis URL '\(url)': \(reason)" }
}
