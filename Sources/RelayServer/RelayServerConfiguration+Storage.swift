import RelayCore
import RelayRedisStore
import RelayStore

extension RelayServerConfiguration {
    /// The store the relay runs on: Redis when ``redis`` is set, else SQLite at ``databasePath``.
    ///
    /// A Redis whose persistence is weaker than `appendonly yes` + `appendfsync always` is
    /// used, with a warning in the log (see the runbook: accepted items can be lost then).
    func openStorage(log: Logger) throws -> any RelayStorage {
        guard let redis else {
            return try SQLiteRelayStorage(path: databasePath, synchronous: synchronous)
        }
        let storage = RedisRelayStorage(endpoint: redis)
        if let warning = storage.durabilityWarning() { log.warning(warning) }
        return storage
    }

    /// What the log says the relay stores into.
    var storeDescription: String { redis.map(\.description) ?? databasePath }
}
