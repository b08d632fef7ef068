import RelayServer

extension RelayServer {
    /// Starts an in-process relay for a test: 127.0.0.1, port 0, its database `relay.db` in
    /// `directory` with `synchronous = normal`, no log; `configure` changes the rest.
    public static func startForTest(
        in directory: String, _ configure: (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> RelayServer {
        var configuration = RelayServerConfiguration()
        configuration.port = 0
        configuration.databasePath = directory + "/relay.db"
        configuration.synchronous = .normal
        configure(&configuration)
        return try await RelayServer.start(configuration, log: .silent)
    }
}
