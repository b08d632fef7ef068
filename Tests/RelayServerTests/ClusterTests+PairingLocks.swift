import Foundation
import RelayProtocol
import TestSupport
import Testing

extension ClusterTests {
    /// Wrong codes through both nodes count toward one address lock, and the lock, stored in
    /// Redis by the leader, holds on the node that takes over after the leader's kill -9.
    @Test func anAddressLockedThroughTheLeaderStaysLockedAfterItsKillNine() async throws {
        let cluster = try await Cluster(["a", "b"])
        let urls = [cluster.url("a"), cluster.url("b")]
        let locking = try await PairingLockSteps.lockTheAddress(urls: urls, clients: cluster.clients)
        await cluster.nodes["a"]!.kill9()
        let answer = try await PairingLockSteps.tryAWrongCode(urls: [cluster.url("b")], clients: cluster.clients, within: Self.takeover)
        PairingLockSteps.expectSameLock(answer, as: locking)
        await cluster.stop()
    }
}
