import RelayCore

extension Committer {
    /// A committer whose confirmations, failures and loaded payloads go to the engine through
    /// `post` (the transport's inbox, ``WebSocketTransport/WebSocketServer/post(_:)``).
    static func posting(
        storage: any RelayStorage, log: Logger, post: @escaping @Sendable (any Sendable) -> Bool,
        fenced: @escaping @Sendable () -> Void = {}
    ) -> Committer {
        Committer(
            storage: storage, log: log,
            committed: { ticket, mutations in _ = post(RelayEngine.Committed(ticket: ticket, mutations: mutations)) },
            failed: { ticket in _ = post(RelayEngine.CommitFailing(ticket: ticket)) },
            loaded: { read, payloads in
                _ = post(RelayEngine.PayloadsLoaded(pair: read.pair, direction: read.direction, payloads: payloads))
            },
            fenced: fenced)
    }
}
