import Foundation
import RelayCore
import RelayProtocol

/// The console API's JSON bodies (`/console/api/...`), as Codable views of the hub's state.
/// Clients (tests, scripts) decode them with the same types.
public enum ConsoleJSON {
    public struct State: Codable, Equatable, Sendable {
        /// When the relay's state shown was taken (its last change; an idle relay takes no new
        /// one), in milliseconds since 1970: the items' `ageMs` are as of then.
        public var now: Int64
        public var pairs: [Pair]
        public var unpairedConnections: Int
        public var faults: [FaultView]
        public var fired: [String: Int]
        public var heldFrames: Int
        /// The latest widget faces of the watches that publish them.
        public var faces: [Face]
        /// On a cluster node (`serve --store redis://…`): which node, and whether it leads now.
        /// Absent on a single relay.
        public var node: Node?
    }

    /// A cluster node's console: only the leading node's shows the cluster's devices and
    /// applies faults; an edge's shows none.
    public struct Node: Codable, Equatable, Sendable {
        public var id: String
        public var leads: Bool

        public init(id: String, leads: Bool) {
            self.id = id
            self.leads = leads
        }
    }

    public struct Face: Codable, Equatable, Sendable {
        /// The watch's device id and its name.
        public var device: String
        public var watch: String
        public var svg: String
        public var at: String
    }

    public struct Pair: Codable, Equatable, Sendable {
        public var id: String
        public var createdAt: String
        public var complicationsLeft: Int
        public var devices: [Device]
        public var directions: [Direction]
    }

    public struct Device: Codable, Equatable, Sendable {
        public var id: String
        public var role: String
        public var name: String
        public var connected: Bool
        public var reachable: Bool
        public var foreground: Bool
        public var forcedUnreachable: Bool
        public var link: UInt64?
        public var lastSeen: String?
    }

    public struct Direction: Codable, Equatable, Sendable {
        public var from: String
        public var to: String
        public var count: Int
        public var lastSeq: Int64
        public var pendingReplies: Int
        public var items: [Item]
    }

    public struct Item: Codable, Equatable, Sendable {
        public var id: String
        public var mode: String
        public var kind: String
        public var size: Int
        public var ageMs: Int64
        public var seq: Int64?
        /// Sent on the receiver's connection and not yet acked.
        public var outstanding: Bool
    }

    public struct FaultView: Codable, Equatable, Sendable {
        public var target: String
        public var kind: String
        public var ms: Int?
        public var p: Double?
        public var left: Int?
        public var setAt: String
        /// In the answer to setting it only: the console has not seen the target (a typo, or a
        /// pair too new for the console's view); the fault is set and applies if it appears.
        public var warning: String? = nil
    }

    public struct Frames: Codable, Equatable, Sendable {
        public var frames: [Frame]
    }

    public struct Frame: Codable, Equatable, Sendable {
        public var number: Int
        public var at: String
        public var direction: String
        public var link: UInt64
        public var pair: String?
        public var role: String?
        public var type: String
        public var preview: String
        public var fault: String
    }

    public struct Message: Codable, Equatable, Sendable {
        public var ok: Bool
        public var message: String
    }

    static func state(_ s: ConsoleHub.State) -> State {
        let now = s.inspectedAt.millisecondsSinceEpoch
        let pairs = s.inspection.pairs.map { p in
            Pair(
                id: p.id.rawValue, createdAt: p.createdAt.iso8601, complicationsLeft: p.complicationsLeft,
                devices: [p.phone, p.watch].map { device($0, lastSeen: s.lastSeen[$0.id]) },
                directions: p.directions.map { d in
                    Direction(
                        from: d.sender.rawValue, to: d.sender.peer.rawValue, count: d.count, lastSeq: d.lastSeq,
                        pendingReplies: d.pendingReplies,
                        items: d.items.map { i in
                            Item(
                                id: i.id, mode: i.mode.rawValue, kind: i.kind, size: i.size,
                                ageMs: max(0, now - i.acceptedAt.millisecondsSinceEpoch), seq: i.seq, outstanding: i.inFlight)
                        })
                })
        }
        var fired: [String: Int] = [:]
        for (kind, n) in s.plan.fired { fired[kind.rawValue] = n }
        return State(
            now: now, pairs: pairs, unpairedConnections: s.inspection.unpairedConnections,
            faults: s.plan.faultsInForce.map(fault), fired: fired, heldFrames: s.heldFrames,
            faces: faces(s), node: s.node)
    }

    /// The latest faces, by watch name.
    static func faces(_ s: ConsoleHub.State) -> [Face] {
        var names: [DeviceID: String] = [:]
        for pair in s.inspection.pairs { names[pair.watch.id] = pair.watch.name }
        return s.faces.keys.sorted { $0.rawValue < $1.rawValue }.map { id in
            Face(device: id.rawValue, watch: names[id] ?? id.rawValue, svg: s.faces[id]!.svg, at: s.faces[id]!.at.iso8601)
        }
    }

    static func device(_ d: RelayInspection.Device, lastSeen: Timestamp?) -> Device {
        Device(
            id: d.id.rawValue, role: d.role.rawValue, name: d.name, connected: d.connected, reachable: d.reachable,
            foreground: d.foreground, forcedUnreachable: d.forcedUnreachable, link: d.link?.rawValue,
            lastSeen: lastSeen?.iso8601)
    }

    static func fault(_ f: Fault) -> FaultView {
        FaultView(
            target: f.target.description, kind: f.kind.rawValue, ms: f.milliseconds, p: f.probability, left: f.left,
            setAt: f.setAt.iso8601)
    }

    static func frames(_ entries: [FrameLog.Entry]) -> Frames {
        Frames(
            frames: entries.map { e in
                Frame(
                    number: e.number, at: e.at.iso8601, direction: e.direction, link: e.link.rawValue, pair: e.pair?.rawValue,
                    role: e.role?.rawValue, type: e.type, preview: e.preview, fault: e.fault)
            })
    }

    /// Encodes a view (keys sorted, so the same state gives the same bytes).
    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(value))) ?? Array(#"{"ok":false,"message":"encoding failed"}"#.utf8)
    }
}
