import RelayProtocol

/// The relay's rules and limits (defaults are the protocol's).
public struct RelayConfiguration: Sendable, Hashable {
    /// Payload limits, reply timeout and complication budget, announced in `welcome`.
    public var limits: Limits
    /// How long a pairing code lives. Default 120 s.
    public var pairingCodeTTLms: Int64
    /// Wrong codes a connection may try before it is locked. Default 5.
    public var wrongCodesPerLink: Int
    /// Wrong codes per client address per minute before the address is locked. Default 20.
    public var wrongCodesPerAddress: Int
    /// Wrong codes relay-wide within one pairing-code lifetime before every `pair.join` is
    /// locked until the oldest of them is a lifetime old. Default 500: an attacker with any
    /// number of addresses gets at most 500 wrong guesses in a code's life (PROTOCOL.md §6.3).
    public var wrongCodesPerRelay: Int
    /// How long a lock lasts. Default 60 s.
    public var lockoutMs: Int64
    /// How long a new connection may take to say `hello`; past it the relay sends
    /// `hello_required` and closes with 1008 (PROTOCOL.md §5.1). Default 10 s.
    public var helloTimeoutMs: Int64
    /// Errors per connection per minute after which it is closed with 1008. Default 100.
    public var maxErrorsPerMinute: Int
    /// Durable items sent and not yet acked on one connection. Default 256.
    ///
    /// With 64, a receiver that acks every 16 items kept the durable rate at ~15,000/s: the relay
    /// waited for acks with its core and the disk idle (BENCHMARKS.md). ``inFlightBytes`` still
    /// caps what one connection holds unacked.
    public var inFlightItems: Int
    /// Bytes of durable payloads sent and not yet acked on one connection. Default 1 MiB.
    public var inFlightBytes: Int
    /// With ``loadsPayloadsOnDemand``: unsent durable items of one direction whose payloads stay
    /// in memory while the receiver is connected. Default 1,024.
    ///
    /// Past this budget (or ``hotPayloadBytes``) new items keep only their metadata and their
    /// payloads are read back from the store when delivery reaches them. With a budget of one
    /// delivery window, a sender a few windows ahead of its receiver paid a store read (on the
    /// committer's thread) for every window it sent (BENCHMARKS.md).
    public var hotPayloadItems: Int
    /// With ``loadsPayloadsOnDemand``: payload bytes (§3.6 sizes) of the unsent items of one
    /// direction kept in memory while the receiver is connected. Default 4 MiB.
    public var hotPayloadBytes: Int
    /// Quota: durable items held per pair direction (sent and unacked, or not sent yet). Default 10,000.
    public var maxQueuedItemsPerDirection: Int
    /// Quota: payload bytes (§3.6 sizes) of the durable items held per pair direction. Default 64 MiB.
    public var maxQueuedBytesPerDirection: Int
    /// Quota: payload bytes of the durable items held over the whole relay. Default 512 MiB.
    public var maxQueuedBytesTotal: Int
    /// Quota: `message`s with `wantsReply` of one pair waiting for their reply (both
    /// directions). Default 10,000.
    public var maxPendingRepliesPerPair: Int
    /// Quota: `message`s with `wantsReply` waiting for their reply over the whole relay. Default 200,000.
    public var maxPendingRepliesTotal: Int
    /// Quota: open connections on the relay (upgraded WebSockets). Default 10,000.
    public var maxConnections: Int
    /// Quota: open connections from one client address. Default 1,000.
    public var maxConnectionsPerAddress: Int
    /// How many seqs are reserved per store write at first (seqs may skip after a restart);
    /// a direction whose blocks are half used within a second of being reserved reserves larger
    /// ones, up to 64 times this (PROTOCOL.md §8.6). At least 1. Default 1024.
    public var seqReservationBlock: Int64
    /// Finished send ids remembered per direction for duplicate detection. Default 1024.
    public var finishedIDsKept: Int
    /// Whether the payloads of queued items stay in the store until they are about to be
    /// delivered. When true, a direction holds in memory the payloads of its sent, unacked items
    /// and of at most ``hotPayloadItems`` / ``hotPayloadBytes`` of the next unsent ones, only
    /// while the receiver is connected; the rest it asks the store for with
    /// ``RelayAction/loadPayloads(_:direction:sendIDs:)``. Default false (a relay without a
    /// store, such as the in-memory one, must keep them); `watchrelay serve` sets it.
    public var loadsPayloadsOnDemand: Bool

    public init(
        limits: Limits = .default, pairingCodeTTLms: Int64 = 120_000, wrongCodesPerLink: Int = 5,
        wrongCodesPerAddress: Int = 20, wrongCodesPerRelay: Int = 500, lockoutMs: Int64 = 60_000, helloTimeoutMs: Int64 = 10_000,
        maxErrorsPerMinute: Int = 100,
        inFlightItems: Int = 256, inFlightBytes: Int = 1 << 20, hotPayloadItems: Int = 1024, hotPayloadBytes: Int = 4 << 20,
        maxQueuedItemsPerDirection: Int = 10_000,
        maxQueuedBytesPerDirection: Int = 64 << 20, maxQueuedBytesTotal: Int = 512 << 20, maxConnections: Int = 10_000,
        maxConnectionsPerAddress: Int = 1_000, seqReservationBlock: Int64 = 1024, finishedIDsKept: Int = 1024,
        loadsPayloadsOnDemand: Bool = false, maxPendingRepliesPerPair: Int = 10_000, maxPendingRepliesTotal: Int = 200_000
    ) {
        self.limits = limits
        self.pairingCodeTTLms = pairingCodeTTLms
        self.wrongCodesPerLink = wrongCodesPerLink
        self.wrongCodesPerAddress = wrongCodesPerAddress
        self.wrongCodesPerRelay = wrongCodesPerRelay
        self.lockoutMs = lockoutMs
        self.helloTimeoutMs = helloTimeoutMs
        self.maxErrorsPerMinute = maxErrorsPerMinute
        self.inFlightItems = inFlightItems
        self.inFlightBytes = inFlightBytes
        self.hotPayloadItems = hotPayloadItems
        self.hotPayloadBytes = hotPayloadBytes
        self.maxQueuedItemsPerDirection = maxQueuedItemsPerDirection
        self.maxQueuedBytesPerDirection = maxQueuedBytesPerDirection
        self.maxQueuedBytesTotal = maxQueuedBytesTotal
        self.maxPendingRepliesPerPair = maxPendingRepliesPerPair
        self.maxPendingRepliesTotal = maxPendingRepliesTotal
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.seqReservationBlock = seqReservationBlock
        self.finishedIDsKept = finishedIDsKept
        self.loadsPayloadsOnDemand = loadsPayloadsOnDemand
    }
}

/// Where the core gets its randomness: codes, tokens, identifiers, token hashes.
///
/// Injected so tests are deterministic; the server passes a live one
/// (cryptographic randomness, SHA-256).
public struct RelayEnvironment: Sendable {
    /// A 6-digit pairing code candidate (the core retries on collision).
    public var pairingCode: @Sendable () -> String
    /// A device token: ≥ 32 random bytes, base64url (≥ 43 characters).
    public var token: @Sendable () -> String
    /// A fresh identifier with the given prefix (`pair`, `dev`, `s`).
    public var identifier: @Sendable (_ prefix: String) -> String
    /// The stored form of a token (SHA-256 hex in production).
    public var hashToken: @Sendable (String) -> String

    public init(
        pairingCode: @escaping @Sendable () -> String, token: @escaping @Sendable () -> String,
        identifier: @escaping @Sendable (_ prefix: String) -> String,
        hashToken: @escaping @Sendable (String) -> String
    ) {
        self.pairingCode = pairingCode
        self.token = token
        self.identifier = identifier
        self.hashToken = hashToken
    }
}
