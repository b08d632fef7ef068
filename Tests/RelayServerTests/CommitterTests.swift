import Foundation
import Primitives
import RelayCore
import RelayProtocol
import RelayRedisStore
import Testing

@testable import RelayServer

/// ``Committer`` with a storage engine that fails on purpose: retries, reports, never skips.
struct CommitterTests {
    /// Fails its first `failures` applies, then records the batches it applied.
    final class FlakyStorage: RelayStorage {
        let state: LockedState<(failuresLeft: Int, applied: [[StoreMutation]])>

        init(failures: Int) {
            state = LockedState((failures, []))
        }

        func loadAll(now: Timestamp) throws -> [PairSnapshot] { [] }

        func loadIndex(now: Timestamp) throws -> [PairSnapshot] { [] }

        func loadPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws -> [ExactID: Payload] { [:] }

        func loadWrongPairingCodes(now: Timestamp) throws -> [WrongPairingCode] { [] }

        func apply(_ mutations: [StoreMutation], urgent: Bool) throws {
            struct Injected: Error {}
            let fail = state.withLock { state -> Bool in
                if state.failuresLeft > 0 {
                    state.failuresLeft -= 1
                    return true
                }
                state.applied.append(mutations)
                return false
            }
            if fail { throw Injected() }
        }
    }

    /// What the committer reported, in order.
    final class Reports: Sendable {
        let events = LockedState<[String]>([])

        /// A committer on `storage` that records `committed TICKET (MUTATIONS)` and `failed TICKET`.
        func committer(on storage: any RelayStorage) -> Committer {
            Committer(
                storage: storage, log: Logger(level: .error, sink: { _ in }),
                committed: { ticket, count in self.events.withLock { $0.append("committed \(ticket) (\(count))") } },
                failed: { ticket in self.events.withLock { $0.append("failed \(ticket)") } })
        }
    }

    /// Reported at the 3rd failed attempt and at every one after it (each closes the
    /// connections that came to wait since), then committed.
    @Test func aFailingBatchIsRetriedReportedFromTheThirdFailureOnAndCommittedInTheEnd() async throws {
        let storage = FlakyStorage(failures: Committer.failuresBeforeReport + 1)
        let reports = Reports()
        let committer = reports.committer(on: storage)
        committer.start()
        let mutation = StoreMutation.setSeqReserved(PairID("pr-1"), direction: .phone, 1024)
        committer.submit(CommitGate.Batch(ticket: 1, mutations: [mutation], urgent: true))
        await committer.stop()
        #expect(reports.events.withLock { $0 } == ["failed 1", "failed 1", "committed 1 (1)"])
        #expect(storage.state.withLock { $0.applied } == [[mutation]])
    }

    /// A store that stays down past ``Committer/attemptsAfterStop`` attempts after `stop()`:
    /// stop returns, nothing is reported committed, the later batch is not tried (a relay told
    /// to stop while its store was down retried for ever and never exited).
    @Test func stopReturnsWhileTheStoreStaysDownAndNothingIsCommitted() async throws {
        let storage = FlakyStorage(failures: .max)
        let reports = Reports()
        let committer = reports.committer(on: storage)
        committer.start()
        for ticket in [1, 2] as [UInt64] {
            committer.submit(
                CommitGate.Batch(ticket: ticket, mutations: [.setSeqReserved(PairID("pr-1"), direction: .phone, 1024)], urgent: true))
        }
        await committer.stop()
        let events = reports.events.withLock { $0 }
        #expect(!events.isEmpty && events.allSatisfy { $0 == "failed 1" }, "\(events)")
        #expect(storage.state.withLock { $0.applied }.isEmpty)
    }

    @Test func batchesAreAppliedInTheOrderSubmitted() async throws {
        let storage = FlakyStorage(failures: 0)
        let reports = Reports()
        let committer = Committer(
            storage: storage, log: Logger(level: .error, sink: { _ in }),
            committed: { ticket, _ in reports.events.withLock { $0.append("committed \(ticket)") } },
            failed: { _ in })
        let batches = (1...5).map { n in
            CommitGate.Batch(
                ticket: UInt64(n), mutations: [.setSeqReserved(PairID("pr-1"), direction: .watch, Int64(n))],
                urgent: n % 2 == 0)
        }
        for batch in batches { committer.submit(batch) }
        committer.start()
        await committer.stop()
        #expect(reports.events.withLock { $0 } == (1...5).map { "committed \($0)" })
        #expect(storage.state.withLock { $0.applied } == batches.map(\.mutations))
    }

    /// Applies its first batch, then refuses every batch as a deposed leader's.
    final class FencedStorage: RelayStorage {
        let applies = LockedState(0)

        func loadAll(now: Timestamp) throws -> [PairSnapshot] { [] }

        func loadIndex(now: Timestamp) throws -> [PairSnapshot] { [] }

        func loadPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws -> [ExactID: Payload] { [:] }

        func loadWrongPairingCodes(now: Timestamp) throws -> [WrongPairingCode] { [] }

        func apply(_ mutations: [StoreMutation], urgent: Bool) throws {
            let n = applies.withLock { n in
                n += 1
                return n
            }
            if n > 1 { throw RedisRelayStorageError.fenced("epoch 1 is no longer the leader's") }
        }
    }

    @Test func aFencedBatchIsNotRetriedAndNothingAfterItIsCommitted() async throws {
        let storage = FencedStorage()
        let reports = Reports()
        let committer = Committer(
            storage: storage, log: Logger(level: .error, sink: { _ in }),
            committed: { ticket, _ in reports.events.withLock { $0.append("committed \(ticket)") } },
            failed: { ticket in reports.events.withLock { $0.append("failed \(ticket)") } },
            fenced: { reports.events.withLock { $0.append("fenced") } })
        for n in 1...3 {
            committer.submit(
                CommitGate.Batch(
                    ticket: UInt64(n), mutations: [.setSeqReserved(PairID("pr-1"), direction: .watch, Int64(n))],
                    urgent: true))
        }
        committer.start()
        await committer.stop()
        #expect(reports.events.withLock { $0 } == ["committed 1", "fenced"])
        #expect(storage.applies.withLock { $0 } == 2, "tried once; the batch after it is not tried at all")
    }
}
