import RelayCore
import RelayProtocol
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

    /// The relay's core over what `storage` holds at `now`: its pairs and the wrong pairing
    /// codes still counting. Unsent payloads stay in the store when they load on demand, so
    /// memory is bounded by the hot budgets of connected receivers, not by what is queued, from
    /// the start. A relay's start and a cluster leader's load alike (on threads of their own:
    /// a store blocks until it answered).
    func loadCore(from storage: any RelayStorage, environment: RelayEnvironment, now: Timestamp) throws -> RelayState {
        let pairs = relay.loadsPayloadsOnDemand ? try storage.loadIndex(now: now) : try storage.loadAll(now: now)
        return RelayState(
            configuration: relay, environment: environment, pairs: pairs,
            wrongPairingCodes: try storage.loadWrongPairingCodes(now: now))
    }

    /// What the log says the relay stores into.
    var storeDescription: String { redis.map(\.description) ?? databasePath }
}
