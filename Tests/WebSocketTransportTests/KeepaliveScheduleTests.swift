import TestSupport
import Testing

@testable import WebSocketTransport

/// The server's keepalive as a value: pings after `pingAfter` of silence, once per silence;
/// hang-ups after `hangupAfter`; anything heard (a message, a pong) starts the silence over.
@Suite struct KeepaliveScheduleTests {
    /// Seconds as the schedule's nanoseconds.
    static func s(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }
    static let a = ConnectionID(rawValue: 1)
    static let b = ConnectionID(rawValue: 2)

    /// A schedule at ping 30 s, hang-up 40 s (the relay's defaults), and the connections' last-heard times.
    struct Harness {
        var schedule = KeepaliveSchedule(pingAfter: s(30), hangupAfter: s(40))
        var heard: [ConnectionID: UInt64] = [:]

        mutating func open(_ id: ConnectionID, at seconds: Double) {
            heard[id] = s(seconds)
            schedule.opened(id, now: s(seconds))
        }

        mutating func due(at seconds: Double, limit: Int = .max) -> [KeepaliveSchedule.Action] {
            let heard = heard
            return schedule.due(now: s(seconds), limit: limit) { heard[$0] }
        }
    }

    @Test func aSilentConnectionIsPingedOnceThenHungUp() {
        var h = Harness()
        h.open(Self.a, at: 0)
        #expect(h.schedule.nextCheck == Self.s(30))
        #expect(h.due(at: 29.9).isEmpty)
        #expect(h.due(at: 30) == [.ping(Self.a)])
        #expect(h.schedule.nextCheck == Self.s(40))
        #expect(h.due(at: 35).isEmpty, "one ping per silence")
        #expect(h.due(at: 40) == [.hangUp(Self.a)])
        #expect(h.schedule.nextCheck == nil && h.schedule.count == 0)
    }

    @Test func anAnsweredPingStartsTheSilenceOver() {
        var h = Harness()
        h.open(Self.a, at: 0)
        #expect(h.due(at: 30) == [.ping(Self.a)])
        h.heard[Self.a] = Self.s(30.01)  // the pong
        #expect(h.due(at: 40).isEmpty)
        #expect(h.schedule.nextCheck == Self.s(60.01))
        #expect(h.due(at: 60.01) == [.ping(Self.a)], "the next silence gets its own ping")
    }

    /// With a hang-up time more than twice the ping time, a pong starts the silence over for
    /// the next ping too: it comes `pingAfter` after the pong, not at the old hang-up time (a
    /// probe found pings up to `hangupAfter - 2 × pingAfter` late: 9 s at 1 s and 10 s).
    @Test func afterAPongTheNextPingComesOnTimeWhenTheHangUpIsFarOff() {
        var h = Harness(schedule: KeepaliveSchedule(pingAfter: Self.s(1), hangupAfter: Self.s(10)))
        h.open(Self.a, at: 0)
        #expect(h.due(at: 1) == [.ping(Self.a)])
        h.heard[Self.a] = Self.s(1.01)  // the pong
        var pingedAt: [Double] = []
        for tenth in 11...100 {
            let now = Double(tenth) / 10
            if h.due(at: now) == [.ping(Self.a)] {
                pingedAt.append(now)
                h.heard[Self.a] = Self.s(now + 0.01)  // answered at once
            }
        }
        #expect(pingedAt == [2.1, 3.2, 4.3, 5.4, 6.5, 7.6, 8.7, 9.8], "a ping each 1 s of silence, within a check")
        // Unanswered, the connection is still hung up at its time, pinged once.
        var silent = Harness(schedule: KeepaliveSchedule(pingAfter: Self.s(1), hangupAfter: Self.s(10)))
        silent.open(Self.b, at: 0)
        var actions: [KeepaliveSchedule.Action] = []
        for tenth in 1...100 { actions += silent.due(at: Double(tenth) / 10) }
        #expect(actions == [.ping(Self.b), .hangUp(Self.b)])
    }

    @Test func trafficKeepsAConnectionFromBeingPingedAtAll() {
        var h = Harness()
        h.open(Self.a, at: 0)
        var pings = 0
        // A message every 10 s for ten minutes; the schedule is looked at every second.
        for second in 1...600 {
            if second % 10 == 0 { h.heard[Self.a] = Self.s(Double(second)) }
            pings += h.due(at: Double(second)).count
        }
        #expect(pings == 0)
        // The entry was looked at about once per ping interval, not once per message.
        #expect(h.schedule.count == 1)
    }

    @Test func aClosedConnectionLeavesWhenItsEntryIsDueAndGetsNothing() {
        var h = Harness()
        h.open(Self.a, at: 0)
        h.open(Self.b, at: 1)
        h.heard[Self.a] = nil  // closed
        #expect(h.due(at: 30).isEmpty)
        #expect(h.schedule.count == 1)
        #expect(h.due(at: 31) == [.ping(Self.b)])
    }

    @Test func aConnectionHeardFromJustBeforeItsHangUpIsNotHungUp() {
        var h = Harness()
        h.open(Self.a, at: 0)
        #expect(h.due(at: 30) == [.ping(Self.a)])
        h.heard[Self.a] = Self.s(39.9)  // a message, not a pong: it counts the same
        #expect(h.due(at: 40).isEmpty)
        #expect(h.due(at: 69.8).isEmpty)
        #expect(h.due(at: 69.9) == [.ping(Self.a)])
    }

    @Test func aLateLookPingsAndHangsUpByTheSilenceItFinds() {
        // A loop that was busy for a while: at 45 s the connection is past its hang-up time.
        var h = Harness()
        h.open(Self.a, at: 0)
        h.open(Self.b, at: 20)
        #expect(h.due(at: 45) == [.hangUp(Self.a)])
        // b is 25 s silent at 45 s: not due yet, pinged at 50 s.
        #expect(h.due(at: 50) == [.ping(Self.b)])
    }

    @Test func aLimitLeavesTheRestDueForTheNextCall() {
        var h = Harness()
        for n in 1...10 { h.open(ConnectionID(rawValue: UInt64(n)), at: 0) }
        let first = h.due(at: 30, limit: 4)
        #expect(first.count == 4)
        #expect(h.schedule.nextCheck == Self.s(30), "six are still due")
        let rest = h.due(at: 30)
        let all: [KeepaliveSchedule.Action] = (1...10).map { n in .ping(ConnectionID(rawValue: UInt64(n))) }
        #expect(first + rest == all, "in the order they opened")
    }

    @Test func manyConnectionsComeDueInTheOrderOfTheirSilence() {
        var h = Harness()
        // Opened in a shuffled order, one every 10 ms.
        var ids = (1...2_000).map { ConnectionID(rawValue: UInt64($0)) }
        var generator = SeededGenerator(seed: 42)
        ids.shuffle(using: &generator)
        for (n, id) in ids.enumerated() { h.open(id, at: Double(n) / 100) }
        var pinged: [ConnectionID] = []
        var t = 30.0
        while pinged.count < ids.count {
            for case .ping(let id) in h.due(at: t) { pinged.append(id) }
            t += 0.5
        }
        #expect(pinged == ids)
    }
}
