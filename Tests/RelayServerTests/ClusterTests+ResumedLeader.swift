import Foundation
import RedisClient
import RelayProtocol
import TestSupport
import Testing

/// What a leader that stood still past its lease (SIGSTOP) sends once it resumes.
extension ClusterTests {
    /// A resumed leader read what its clients sent during the pause at once, and its engine
    /// answered before the lease thread's step-down reached the service thread, from a core the
    /// cluster had moved on from: an `outstanding` listing an item the watch had acked through
    /// the new leader meanwhile, a `peer` saying the watch was gone while it was connected to
    /// the new leader (a race: seen in 3 of 5 runs). Commits are fenced, answers were not. Now
    /// the service thread checks the lease's validity before the engine handles anything: the
    /// node steps down first and the phone gets its 1001, no answer.
    @Test func aResumedLeaderPastItsLeaseAnswersNothingBeforeItStepsDown() async throws {
        let cluster = try await Cluster(["a", "b"])
        let (phone, watch, _, watchToken, d1) = try await Self.pairWithOneDelivered(cluster)
        #expect(d1.id == "u1", "not acked: a's core lists it as outstanding")

        let a = try await Self.freeze("a", until: "b", in: cluster)
        defer { kill(a, SIGCONT) }
        #expect(try await watch.closed(Self.wait) == 1001, "b stopped forwarding to a")
        // The watch gets u1 again through b, which leads now, and acks it: the store drops it.
        let watch2 = try await Self.reconnect(.watch, token: watchToken, cluster: cluster, nodes: ["b"])
        guard case .deliver(let again) = try await watch2.next(Self.wait) else { throw TestFailure("deliver again") }
        #expect(again.id == "u1")
        watch2.send(.ack(Ack(seq: again.seq)))
        let admin = RedisClient(endpoint: cluster.redis.endpoint)
        try await eventually(Self.wait, "the ack to be stored") {
            let keys = await admin.execute([RedisCommand("KEYS", "wr:pair:*:items")])[0]
            return (try? keys.get())?.elements?.isEmpty == true
        }
        await admin.close()

        // The phone asks a, still frozen, what is outstanding; then a resumes.
        phone.send(.outstanding(Request(id: "o1")))
        kill(a, SIGCONT)
        let (frames, end) = await Self.framesUntilEnd(phone)
        #expect(frames.isEmpty, "a deposed leader answers nothing: \(frames)")
        #expect(end.contains("closed (1001 relay leader changing)"), "\(end)")
        await cluster.stop()
    }
}
