import Foundation
import RelayRedisStore

/// How a relay node joins the cluster of the nodes on its Redis (`serve --store redis://…`,
/// docs/REDIS.md "Several nodes"): one leader runs the relay core, the others forward to it.
public struct ClusterConfiguration: Sendable, Hashable {
    /// This node's id: 1–64 of `A–Z a–z 0–9 _ -`, unique in the cluster. Default: a random one.
    public var nodeID: String
    /// How long the leader's lease lasts after each renewal (renewed every third of it): how
    /// soon another node takes over after the leader died. Default 5000 ms.
    public var leaseTTLMilliseconds: Int

    public init(nodeID: String = ClusterConfiguration.randomNodeID(), leaseTTLMilliseconds: Int = 5000) {
        self.nodeID = nodeID
        self.leaseTTLMilliseconds = leaseTTLMilliseconds
    }

    /// `n` and 12 random hex digits.
    public static func randomNodeID() -> String {
        "n" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }

    /// Whether `id` can name a node (it is part of Redis keys, channels and connection names).
    public static func validNodeID(_ id: String) -> Bool { RedisLeaderLease.validNodeID(id) }

    /// Whether ``nodeID`` and the TTL can be used.
    public var isValid: Bool { RedisLeaderLease.validNodeID(nodeID) && leaseTTLMilliseconds >= 100 }
}
