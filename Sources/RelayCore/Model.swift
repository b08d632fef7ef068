import Primitives
import RelayProtocol

/// One WebSocket connection as the core sees it (the transport's connection number).
public struct LinkID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: LinkID, b: LinkID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "link-\(rawValue)" }

    /// A `Dictionary`'s or `Set`'s hash without SipHash: link numbers come from the transport's
    /// counter (see ``CounterHash``).
    public func _rawHashValue(seed: Int) -> Int {
        CounterHash.mix(rawValue, seed: seed)
    }
}

/// A paired device's durable identity.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A pair's durable identity (`pairId` on the wire).
public struct PairID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A paired device as stored: its token only as a SHA-256 hex digest.
public struct DeviceRecord: Hashable, Sendable {
    public var id: DeviceID
    public var role: Role
    public var name: String
    public var tokenHash: String
    /// Whether the device's app is installed: false from its `state` `{appInstalled: false}`
    /// until its next `hello` (PROTOCOL.md §7.1).
    public var appInstalled: Bool

    public init(id: DeviceID, role: Role, name: String, tokenHash: String, appInstalled: Bool = true) {
        self.id = id
        self.role = role
        self.name = name
        self.tokenHash = tokenHash
        self.appInstalled = appInstalled
    }
}

/// A pair as stored.
public struct PairRecord: Hashable, Sendable {
    public var id: PairID
    public var createdAt: Timestamp
    public var phone: DeviceRecord
    public var watch: DeviceRecord

    public init(id: PairID, createdAt: Timestamp, phone: DeviceRecord, watch: DeviceRecord) {
        self.id = id
        self.createdAt = createdAt
        self.phone = phone
        self.watch = watch
    }

    /// The member of `role`.
    public func device(_ role: Role) -> DeviceRecord { role == .phone ? phone : watch }
}

/// A durable item (context, userInfo or complication) accepted from a sender.
///
/// Items flow in a *direction*, named by the sender's role: `.phone` items go to the watch.
public struct QueuedItem: Hashable, Sendable {
    /// The sender's `send.id`.
    public var sendID: String
    /// `context`, `userInfo` or `complication` (a complication over budget is stored as `userInfo`).
    public var mode: DeliveryMode
    public var payload: Payload
    /// When the relay accepted it (`deliver.sentAt`).
    public var acceptedAt: Timestamp
    /// Assigned when first sent; kept across redeliveries and restarts.
    public var seq: Int64?
    /// Compact payload size in bytes (for the in-flight window).
    public var size: Int
    /// Whether ``payload`` is the item's payload; false when only the store has it (the relay
    /// reads it back before delivering the item: see ``RelayConfiguration/loadsPayloadsOnDemand``).
    public private(set) var isPayloadLoaded = true

    public init(sendID: String, mode: DeliveryMode, payload: Payload, acceptedAt: Timestamp, seq: Int64? = nil) {
        self.sendID = sendID
        self.mode = mode
        self.payload = payload
        self.acceptedAt = acceptedAt
        self.seq = seq
        self.size = payload.encodedSize
    }

    /// The item with its payload left to the store (in its place an object with only its
    /// `kind`, which the console shows); its ``size`` stays the payload's, so the quotas and
    /// windows still count it.
    public func withoutPayload() -> QueuedItem {
        var item = self
        item.payload = payload.kind.map { Payload(onlyKind: $0) } ?? Self.unloaded
        item.isPayloadLoaded = false
        return item
    }

    /// The item with `payload` (read back from the store) in place; its ``size`` is kept.
    public func with(payload: Payload) -> QueuedItem {
        var item = self
        item.payload = payload
        item.isPayloadLoaded = true
        return item
    }

    private static let unloaded = Payload(members: [:])

    /// The `deliver` frame for this item from `sender` (requires `seq`).
    func deliver(from sender: Role) -> Deliver {
        Deliver(seq: seq ?? 0, mode: mode, id: sendID, from: sender, sentAt: acceptedAt, payload: payload)
    }
}

/// One change the relay's store must commit before the frames that follow it go out.
///
/// The core emits these as `.persist` actions; the server commits them in groups on the
/// store's own executor and releases the frames that depend on them after the commit.
public enum StoreMutation: Hashable, Sendable {
    /// A new pair with both devices (and their hashed tokens), or a pair's devices changed (a
    /// name, an app installed or not): the record replaces the stored one.
    case insertPair(PairRecord)
    /// Dissolve a pair: its devices, tokens, items, contexts, budget and bookkeeping go.
    case deletePair(PairID)
    /// A newly accepted item, appended to its direction (insertion order = acceptance order).
    case insertItem(PairID, direction: Role, QueuedItem)
    /// An item was sent for the first time with `seq`.
    case setItemSeq(PairID, direction: Role, sendID: String, seq: Int64)
    /// Items acked, cancelled or replaced.
    case deleteItems(PairID, direction: Role, sendIDs: [String])
    /// The last context sent in `direction` (for `welcome.context`).
    case setLastSentContext(PairID, direction: Role, Deliver)
    /// Seqs up to this value may have been used in `direction` (reserved in blocks).
    case setSeqReserved(PairID, direction: Role, Int64)
    /// One complication transfer was used at this time (rolling 24 h budget).
    case addComplicationUse(PairID, Timestamp)
    /// More `transferred` ids owed to the sender of `direction` (it is away), after the ones
    /// already owed. Appended, not rewritten: a sender away while 100k of its items drain
    /// would otherwise rewrite a list of up to 100k ids on every ack.
    case appendPendingTransferred(PairID, direction: Role, ids: [String])
    /// The sender of `direction` got every `transferred` it was owed.
    case clearPendingTransferred(PairID, direction: Role)
    /// Ids of finished sends (acked or cancelled), kept for duplicate-send detection.
    case recordFinished(PairID, direction: Role, sendIDs: [String])
    /// A cancelled send: finished (as ``recordFinished(_:direction:sendIDs:)``), and remembered
    /// as cancelled, so that a `cancel` of it after a restart is `cancelled` again, not
    /// `already_delivered` (PROTOCOL.md §8.8).
    case recordCancelled(PairID, direction: Role, sendID: String)
    /// A `pair.join` with a wrong code: counts toward its address's and the relay's locks
    /// (PROTOCOL.md §6.3), which a restarted relay (or a new cluster leader) loads back.
    case recordWrongPairingCode(WrongPairingCode)
}

/// One wrong pairing code, as the store keeps it so that the address and relay-wide locks of
/// PROTOCOL.md §6.3 survive a restart of the relay or a change of cluster leader. (A
/// connection's own lock ends with its connection: nothing of it is stored.)
///
/// Loaded back in the order they were recorded, they rebuild the locks exactly: each says
/// whether it locked its address, so nothing is recounted under another configuration.
public struct WrongPairingCode: Hashable, Sendable {
    /// The client address it came from.
    public var address: String
    /// When it was tried.
    public var at: Timestamp
    /// Set if it locked its address: until when. The address's earlier wrong codes no longer
    /// count for the address then (they still count relay-wide).
    public var addressLockedUntil: Timestamp?
    /// When it stops counting for anything (its address's minute, the relay's window, the lock
    /// it set): the store forgets it then.
    public var countsUntil: Timestamp

    public init(address: String, at: Timestamp, addressLockedUntil: Timestamp? = nil, countsUntil: Timestamp) {
        self.address = address
        self.at = at
        self.addressLockedUntil = addressLockedUntil
        self.countsUntil = countsUntil
    }
}

/// Everything durable about one direction of a pair, as loaded at start.
public struct DirectionSnapshot: Hashable, Sendable {
    /// Items not yet acked, in acceptance order (with `seq` where already sent).
    public var items: [QueuedItem]
    public var lastSentContext: Deliver?
    public var seqReserved: Int64
    public var pendingTransferred: [String]
    /// Most recent last.
    public var finishedIDs: [String]
    /// Those of ``finishedIDs`` that were cancelled (not delivered), in the same order.
    public var cancelledIDs: [String]

    public init(
        items: [QueuedItem] = [], lastSentContext: Deliver? = nil, seqReserved: Int64 = 0,
        pendingTransferred: [String] = [], finishedIDs: [String] = [], cancelledIDs: [String] = []
    ) {
        self.items = items
        self.lastSentContext = lastSentContext
        self.seqReserved = seqReserved
        self.pendingTransferred = pendingTransferred
        self.finishedIDs = finishedIDs
        self.cancelledIDs = cancelledIDs
    }
}

/// One pair as loaded at start.
public struct PairSnapshot: Hashable, Sendable {
    public var record: PairRecord
    /// Keyed by the sender's role.
    public var directions: [Role: DirectionSnapshot]
    public var complicationUses: [Timestamp]

    public init(record: PairRecord, directions: [Role: DirectionSnapshot] = [:], complicationUses: [Timestamp] = []) {
        self.record = record
        self.directions = directions
        self.complicationUses = complicationUses
    }
}
