import RelayProtocol
import Testing

@testable import RelayClient

/// Drives a ``SessionCore`` by hand: a fake clock, tickets, and writes that succeed (or fail
/// on demand). No sockets, no sleeping: time moves only when a test says so.
struct CoreHarness {
    var core: SessionCore
    var now: ContinuousClock.Instant
    var nextTicket: UInt64 = 0
    /// Answer every `persist` with success (false: leave writes unanswered).
    var answersWrites = true
    /// When answering writes, fail them instead.
    var failWrites = false
    /// Writes left unanswered (when `answersWrites` is false).
    var unanswered: [SessionWrite] = []

    init(
        role: Role = .watch, restored: SessionSnapshot = SessionSnapshot(), backoff: [Double] = [1, 2, 4],
        requestTimeout: Duration = .seconds(10), foreground: Bool = true, seed: UInt64 = 7
    ) {
        core = SessionCore(
            settings: SessionCore.Settings(
                role: role, deviceName: role == .watch ? "Watch" : "Phone", foreground: foreground, backoff: backoff,
                requestTimeout: requestTimeout, idPrefix: "t", seed: seed),
            restored: restored)
        now = ContinuousClock.now
    }

    /// A harness already paired and activated with a reachable counterpart.
    static func paired(role: Role = .watch, lastSeq: Int64 = 0, limits: Limits = .default) -> CoreHarness {
        var h = CoreHarness(role: role, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer", lastSeq: lastSeq))
        h.activate(limits: limits)
        return h
    }

    /// Feeds `input` (and answers the writes it asks for); returns every action, in order.
    @discardableResult
    mutating func feed(_ input: SessionInput) -> [SessionAction] {
        var all: [SessionAction] = []
        var inputs = [input]
        while !inputs.isEmpty {
            let actions = core.handle(inputs.removeFirst(), now: now)
            all += actions
            for case .persist(let w) in actions {
                if !answersWrites {
                    unanswered.append(w)
                } else if failWrites {
                    inputs.append(.persistFailed(id: w.id, reason: "disk full"))
                } else {
                    inputs.append(.persisted(id: w.id))
                }
            }
        }
        return all
    }

    /// Runs `command` with a fresh ticket.
    mutating func command(_ command: SessionCommand) -> (ticket: SessionTicket, actions: [SessionAction]) {
        nextTicket += 1
        let ticket = SessionTicket(nextTicket)
        return (ticket, feed(.command(ticket, command)))
    }

    /// Moves the clock on and delivers the tick.
    @discardableResult
    mutating func advance(_ d: Duration) -> [SessionAction] {
        now += d
        return feed(.tick)
    }

    /// Feeds a frame from the relay.
    @discardableResult
    mutating func frame(_ f: RelayFrame) -> [SessionAction] { feed(.frame(f)) }

    /// activate → connect → connected → hello → welcome; returns the welcome's actions.
    @discardableResult
    mutating func activate(
        paired: Bool? = nil, reachable: Bool = true, limits: Limits = .default, context: Deliver? = nil
    ) -> [SessionAction] {
        if core.phase == .idle { _ = command(.activate) }
        feed(.connected)
        return frame(welcome(paired: paired ?? core.isPaired, reachable: reachable, limits: limits, context: context))
    }

    /// The connection the core dropped closes, the back-off passes, a new one opens and is
    /// welcomed (paired): returns the hello it sent.
    mutating func reconnectAfterResync() -> Hello? {
        _ = feed(.closed(code: 1000))
        advance(.seconds(2))
        guard case .hello(let hello)? = feed(.connected).sentFrames.first else { return nil }
        frame(welcome(paired: true))
        return hello
    }

    /// A `welcome` answering the current hello.
    func welcome(paired: Bool, reachable: Bool = true, limits: Limits = .default, context: Deliver? = nil) -> RelayFrame {
        .welcome(
            Welcome(
                re: core.helloID, session: "s-1", role: core.settings.role, paired: paired, pairID: paired ? "pair-1" : nil,
                peer: paired ? PeerInfo(name: "Peer", connected: true, reachable: reachable) : nil, limits: limits,
                context: context))
    }

    /// The id of the last `send`/request frame sent.
    static func lastRequestID(_ actions: [SessionAction]) -> String? {
        actions.sentFrames.last?.id
    }
}

/// A `deliver` frame.
func deliver(
    _ seq: Int64, _ mode: DeliveryMode = .userInfo, id: String? = nil, kind: String = "item", wantsReply: Bool? = nil
) -> Deliver {
    Deliver(
        seq: seq, mode: mode, id: id ?? "p-\(seq)", from: .phone, sentAt: Timestamp(millisecondsSinceEpoch: 1_000),
        payload: Payload(kind: kind, ["n": .int(seq)]), wantsReply: wantsReply)
}

extension Array where Element == SessionAction {
    /// The frames sent, in order.
    var sentFrames: [ClientFrame] { compactMap { if case .send(let f) = $0 { f } else { nil } } }
    /// The events emitted, in order.
    var events: [SessionEvent] { compactMap { if case .emit(let e) = $0 { e } else { nil } } }
    /// The writes asked for, in order.
    var writes: [SessionWrite] { compactMap { if case .persist(let w) = $0 { w } else { nil } } }
    /// The acks sent, in order.
    var acks: [Int64] { sentFrames.compactMap { if case .ack(let a) = $0 { a.seq } else { nil } } }
    /// How many connections were asked for.
    var connects: Int { filter { $0 == .connect }.count }
    /// Whether a disconnect was asked for.
    var disconnects: Bool { contains { if case .disconnect = $0 { true } else { false } } }
    /// The deadlines armed, in order.
    var deadlines: [ContinuousClock.Instant?] {
        var out: [ContinuousClock.Instant?] = []
        for case .armDeadline(let d) in self { out.append(d) }
        return out
    }

    /// How the command with `ticket` finished, if it did.
    func completion(_ ticket: SessionTicket) -> Result<SessionOutcome, RelaySessionError>? {
        for case .complete(let t, let r) in self where t == ticket { return r }
        return nil
    }

    /// The error the command with `ticket` failed with, if it did.
    func failure(_ ticket: SessionTicket) -> RelaySessionError? {
        if case .failure(let e)? = completion(ticket) { return e }
        return nil
    }
}
