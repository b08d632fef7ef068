import RelayProtocol

/// What the relay holds at one moment, for a developer's eyes (the console): pairs, their
/// devices' presence and, per direction, the durable queue. A value copied out of the core.
public struct RelayInspection: Sendable, Equatable {
    /// One device of a pair.
    public struct Device: Sendable, Equatable {
        public var id: DeviceID
        public var role: Role
        public var name: String
        /// Whether it has a live connection (`hello` done).
        public var connected: Bool
        /// Whether its peer may message it now (a watch only while foreground, no fault).
        public var reachable: Bool
        /// A watch's foreground state (a phone: always true while connected).
        public var foreground: Bool
        /// Whether a fault forces it unreachable.
        public var forcedUnreachable: Bool
        /// Its connection, when connected.
        public var link: LinkID?
    }

    /// One held durable item.
    public struct Item: Sendable, Equatable {
        public var id: String
        public var mode: DeliveryMode
        public var kind: String
        public var size: Int
        public var acceptedAt: Timestamp
        /// Set once sent; `inFlight` while unacked on the receiver's current connection.
        public var seq: Int64?
        public var inFlight: Bool
    }

    /// One direction of a pair, named by the sender's role.
    public struct Direction: Sendable, Equatable {
        public var sender: Role
        /// Held items in acceptance order (at most ``RelayState/inspect(maxItems:)``'s limit).
        public var items: [Item]
        /// All held items (may exceed `items.count`).
        public var count: Int
        public var lastSeq: Int64
        /// Replies still owed to the sender.
        public var pendingReplies: Int
    }

    public struct Pair: Sendable, Equatable {
        public var id: PairID
        public var createdAt: Timestamp
        public var phone: Device
        public var watch: Device
        /// Phone → watch first, then watch → phone.
        public var directions: [Direction]
        public var complicationsLeft: Int
    }

    public var pairs: [Pair]
    /// Connections that said no `hello` yet or belong to no pair.
    public var unpairedConnections: Int

    /// An inspection from its parts (an empty one before the first tick).
    public init(pairs: [Pair] = [], unpairedConnections: Int = 0) {
        self.pairs = pairs
        self.unpairedConnections = unpairedConnections
    }
}

extension RelayState {
    /// Copies out what the console shows; lists at most `maxItems` items per direction.
    public mutating func inspect(now: Timestamp, maxItems: Int = 50) -> RelayInspection {
        self.now = now
        var out: [RelayInspection.Pair] = []
        for (id, pair) in pairs.sorted(by: { ($0.value.record.createdAt, $0.key.rawValue) < ($1.value.record.createdAt, $1.key.rawValue) }) {
            var directions: [RelayInspection.Direction] = []
            for sender in [Role.phone, .watch] {
                let q = pair[sender]
                let inFlightIDs = Set(q.sent.prefix(q.inFlight).map { ExactID($0.sendID) })
                let items = q.outstanding.prefix(maxItems).map { item in
                    RelayInspection.Item(
                        id: item.sendID, mode: item.mode, kind: item.payload.kind ?? "", size: item.size,
                        acceptedAt: item.acceptedAt, seq: item.seq, inFlight: inFlightIDs.contains(ExactID(item.sendID)))
                }
                let owed = replies.keys(of: id).filter { $0.requesterRole == sender }.count
                directions.append(
                    RelayInspection.Direction(
                        sender: sender, items: Array(items), count: q.queuedCount, lastSeq: q.lastSeq, pendingReplies: owed))
            }
            out.append(
                RelayInspection.Pair(
                    id: id, createdAt: pair.record.createdAt, phone: inspectDevice(pair.record.phone),
                    watch: inspectDevice(pair.record.watch), directions: directions, complicationsLeft: complicationsLeft(id)))
        }
        let unpaired = links.values.filter { $0.phase != .closing && $0.session?.pairID == nil }.count
        return RelayInspection(pairs: out, unpairedConnections: unpaired)
    }

    private func inspectDevice(_ record: DeviceRecord) -> RelayInspection.Device {
        let p = presence(of: record.id)
        let link = self.link(of: record.id)
        let foreground = link.flatMap { links[$0]?.session?.foreground } ?? false
        return RelayInspection.Device(
            id: record.id, role: record.role, name: record.name, connected: p.connected, reachable: p.reachable,
            foreground: foreground, forcedUnreachable: forcedUnreachable.contains(record.id), link: link)
    }
}
