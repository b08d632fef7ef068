import RelayServer

extension RelayServer {
    /// Starts an in-process relay for a test: 127.0.0.1, port 0, its database `relay.db` in
    /// `directory` with `synchronous = normal`, no log, and a `hello` deadline of 60 s ×
    /// ``timeoutScale`` (a test's first frames can take longer than the default 10 s to come under
    /// ThreadSanitizer, or when the whole suite shares two cores); `configure` changes the rest.
    public static func startForTest(
        in directory: String, _ configure: (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> RelayServer {
        var configuration = RelayServerConfiguration()
        configuration.port = 0
        configuration.databasePath = directory + "/relay.db"
        configuration.synchronous = .normal
        configuration.relay.helloTimeoutMs = Int64(60_000 * timeoutScale)
        // A phone that fetches a long paged list from GitHub can take longer than 10 s to reply
        // under ThreadSanitizer; tests of the reply timeout set their own.
        configuration.relay.limits.replyTimeoutMs = Int(10_000 * timeoutScale)
        configure(&configuration)
        return try await RelayServer.start(configuration, log: .silent)
    }
}
