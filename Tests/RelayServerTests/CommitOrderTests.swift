import Foundation
import Primitives
import RelayCore
import RelayProtocol
import Testing

@testable import RelayServer

/// The core driven through the CommitGate as RelayEngine does, with commits under the test's
/// control. `wire` is what went out; `durable` what the store holds.
struct CommitPipeline {
    final class Counter: Sendable {
        let n = LockedState(0)
        func next() -> Int { n.withLock { $0 += 1; return $0 } }
    }
    var state: RelayState
    var gate = CommitGate()
    var wire: [(LinkID, RelayFrame)] = []
    var durable: [StoreMutation] = []
    var inFlight: CommitGate.Batch?
    var now = Timestamp(millisecondsSinceEpoch: 1_800_000_000_000)
    var links: UInt64 = 0
    var tokens: [Role: String] = [:]

    init() {
        let c = Counter()
        let env = RelayEnvironment(
            pairingCode: { String(format: "%06d", 100_000 + c.next()) },
            token: { "token-\(c.next())-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
            identifier: { "\($0)-\(c.next())" }, hashToken: { "h:" + $0 })
        state = RelayState(configuration: RelayConfiguration(), environment: env)
    }

    mutating func run(_ event: RelayEvent) {
        let actions = state.handle(event, now: now)
        var ready: [RelayAction] = []
        gate.admit(actions, into: &ready)
        take(ready)
    }

    mutating func take(_ ready: [RelayAction]) {
        for a in ready {
            if case .send(let l, let f) = a {
                wire.append((l, f))
                if case .paired(let p) = f { tokens[p.re == nil ? .phone : .watch] = p.token }
            }
        }
    }

    /// Hands the open batch to the "committer" (does not commit it).
    mutating func submit() {
        if inFlight == nil { inFlight = gate.takeBatch() }
    }

    /// Commits every batch until nothing is open or in flight.
    mutating func commitAll() {
        while true {
            submit()
            guard let b = inFlight else { return }
            durable += b.mutations
            var ready: [RelayAction] = []
            for r in gate.committed(b.ticket, into: &ready) {
                state.seqReservationCommitted(r.pair, direction: r.direction, upTo: r.upTo)
            }
            inFlight = nil
            take(ready)
        }
    }

    mutating func open() -> LinkID {
        links += 1
        run(.opened(LinkID(links), address: "198.51.100.1"))
        return LinkID(links)
    }

    mutating func frame(_ link: LinkID, _ f: ClientFrame) { run(.frame(link, FrameCodec.encode(f))) }

    mutating func hello(_ link: LinkID, _ role: Role, name: String? = nil, token: String? = nil, lastSeq: Int64? = nil) {
        frame(
            link,
            .hello(
                Hello(
                    id: "h-\(link.rawValue)", role: role, deviceName: name ?? (role == .phone ? "Phone" : "Watch"),
                    token: token, lastSeq: lastSeq)))
    }

    /// Paired and committed; returns the links.
    mutating func pair() -> (LinkID, LinkID) {
        let phone = open()
        hello(phone, .phone)
        frame(phone, .pairBegin(Request(id: "begin")))
        let code = wire.compactMap { if case .pairCode(let c) = $0.1 { c.code } else { nil } }.last!
        let watch = open()
        hello(watch, .watch)
        frame(watch, .pairJoin(PairJoin(id: "join", code: code)))
        commitAll()
        return (phone, watch)
    }

    func sent(to link: LinkID) -> [RelayFrame] { wire.filter { $0.0 == link }.map(\.1) }

    func durableInsert(_ id: String) -> Bool {
        durable.contains { if case .insertItem(_, _, let item) = $0 { item.sendID == id } else { false } }
    }
    func durableDelete(_ id: String) -> Bool {
        durable.contains { if case .deleteItems(_, _, let ids) = $0 { ids.contains(id) } else { false } }
    }
}

/// Answers that report what the store will hold wait until it holds it (from a review of the
/// relay core: each of these went out before its commit, so a kill -9 made it untrue).
@Suite struct CommitOrderTests {
    let payload = Payload(kind: "wc.userInfo")

    /// PROTOCOL §8.1: `accepted` only after the item is committed. A retry on a new connection
    /// is answered from memory at once, while the first attempt's insert is still uncommitted.
    @Test func retryOnANewConnectionIsAcceptedBeforeTheInsertIsCommitted() {
        var p = CommitPipeline()
        let (phone, watch) = p.pair()
        p.run(.closed(watch))
        p.commitAll()
        p.frame(phone, .send(Send(id: "x-1", mode: .userInfo, payload: payload)))
        p.submit()  // with the committer, not yet durable
        #expect(!p.sent(to: phone).contains { $0 == .accepted(Accepted(re: "x-1")) })
        p.run(.closed(phone))
        let phone2 = p.open()
        p.hello(phone2, .phone, token: p.tokens[.phone])
        p.frame(phone2, .send(Send(id: "x-1", mode: .userInfo, payload: payload)))
        p.frame(phone2, .outstanding(Request(id: "o-1")))
        let acceptedEarly = p.sent(to: phone2).contains { $0 == .accepted(Accepted(re: "x-1")) }
        let listedEarly = p.sent(to: phone2).contains { $0 == .outstanding(OutstandingList(re: "o-1", ids: ["x-1"])) }
        #expect(!p.durableInsert("x-1"))
        #expect(acceptedEarly == false, "accepted x-1 went out before its insert was committed")
        #expect(listedEarly == false, "outstanding listed x-1 before its insert was committed")
    }

    /// A cancel asked again on a new connection, while the first one's deletion is still on its
    /// way to the store: the second `cancelled` waits for it too.
    @Test func aRepeatedCancelOnANewConnectionWaitsForTheDeletion() {
        var p = CommitPipeline()
        let (phone, watch) = p.pair()
        p.run(.closed(watch))
        p.frame(phone, .send(Send(id: "x-1", mode: .userInfo, payload: payload)))
        p.commitAll()
        p.frame(phone, .cancel(Cancel(id: "c-1", target: "x-1")))
        p.submit()  // the deletion with the committer, not yet durable
        p.run(.closed(phone))
        let phone2 = p.open()
        p.hello(phone2, .phone, token: p.tokens[.phone])
        p.frame(phone2, .cancel(Cancel(id: "c-2", target: "x-1")))
        #expect(!p.sent(to: phone2).contains { $0 == .cancelled(Answer(re: "c-2")) })
        p.commitAll()
        #expect(p.durableDelete("x-1"))
        #expect(p.sent(to: phone2).contains { $0 == .cancelled(Answer(re: "c-2")) })
    }

    /// PROTOCOL §8.7: an ack's effect is durable before `transferred` goes out.
    @Test func pendingTransferredGoesOutBeforeTheAckIsCommitted() {
        var p = CommitPipeline()
        let (phone, watch) = p.pair()
        p.frame(phone, .send(Send(id: "x-1", mode: .userInfo, payload: payload)))
        p.commitAll()
        #expect(p.sent(to: watch).contains { if case .deliver(let d) = $0 { d.id == "x-1" } else { false } })
        p.run(.closed(phone))
        p.commitAll()
        p.frame(watch, .ack(Ack(seq: 1)))
        p.submit()  // ack batch with the committer, not yet durable
        let phone2 = p.open()
        p.hello(phone2, .phone, token: p.tokens[.phone])
        let early = p.sent(to: phone2).contains { $0 == .transferred(Transferred(ids: ["x-1"])) }
        #expect(!p.durableDelete("x-1"))
        #expect(early == false, "transferred went out before the ack was committed")
    }

    /// §6.4: `unpaired` says the pair is gone; it goes out before the deletePair commit.
    @Test func unpairedGoesOutBeforeTheDeletionIsCommitted() {
        var p = CommitPipeline()
        let (phone, watch) = p.pair()
        p.frame(phone, .unpair(Request(id: "u-1")))
        let early = p.sent(to: phone).contains { if case .unpaired = $0 { true } else { false } }
            || p.sent(to: watch).contains { if case .unpaired = $0 { true } else { false } }
        #expect(!p.durable.contains { if case .deletePair = $0 { true } else { false } })
        #expect(early == false, "unpaired went out before deletePair was committed")
    }

    /// §5.1: "device.name is shown to the peer (peer.name); the relay keeps the latest one."
    @Test func aRenamedDeviceIsShownToItsPeerByItsLatestName() {
        var p = CommitPipeline()
        let (phone, watch) = p.pair()
        p.run(.closed(watch))
        p.run(.closed(phone))
        p.commitAll()
        let watch2 = p.open()
        p.hello(watch2, .watch, name: "Renamed Watch", token: p.tokens[.watch])
        let phone2 = p.open()
        p.hello(phone2, .phone, token: p.tokens[.phone])
        p.commitAll()
        let name = p.sent(to: phone2).compactMap { if case .welcome(let w) = $0 { w.peer?.name } else { nil } }.first
        #expect(name == "Renamed Watch")
    }
}
