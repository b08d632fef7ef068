import RelayCore
import RelayProtocol
import Testing

/// What one pair can make the relay's one service thread do for a frame must not grow with what
/// that pair holds: every other pair's frames wait behind it (scripts/hostile/protocol_attack.py
/// found each of these against a live relay). Each test times the same frames before and after
/// the pair piled up state, so the machine's speed cancels out, and keeps the fastest of three
/// rounds each time, so a busy moment does not; the bound is loose (the old code was 10 to 100
/// times slower after, the new one about as fast).
@Suite struct WorkPerFrameTests {
    /// Handles `frames` on the core directly (no decoding of the output) and returns how long it took.
    static func time(_ h: inout RelayHarness, _ frames: [(LinkID, [UInt8])]) -> Duration {
        let clock = ContinuousClock()
        let now = h.now
        return clock.measure {
            for (link, bytes) in frames { _ = h.state.handle(.frame(link, bytes), now: now) }
        }
    }

    /// The fastest of three rounds of `frames(round)`: a machine busy with other tests slows
    /// one round, rarely all three, so the comparison is of the work and not of the moment.
    static func fastest(_ h: inout RelayHarness, _ frames: (Int) -> [(LinkID, [UInt8])]) -> Duration {
        var best = Duration.seconds(3600)
        for round in 0..<3 { best = min(best, time(&h, frames(round))) }
        return best
    }

    static func message(_ id: String, wantsReply: Bool = false) -> [UInt8] {
        Array(#"{"type":"send","id":"\#(id)","mode":"message","wantsReply":\#(wantsReply),"payload":{"kind":"k"}}"#.utf8)
    }

    /// A phone flooding its own watch with requests it never answers (they wait `replyTimeoutMs`)
    /// does not slow another pair's messages: the relay expired due requests by walking all of
    /// them before every event.
    @Test func thousandsOfPendingRequestsOfOnePairDoNotSlowAnotherPairsFrames() {
        // Past the default quota of 10,000 per pair (many pairs together reach as many).
        var h = RelayHarness(configuration: RelayConfiguration(maxPendingRepliesPerPair: 100_000))
        let (victimPhone, victimWatch) = h.pairDevices()
        let (attacker, _) = h.pairDevices()
        let before = Self.fastest(&h) { round in (0..<2000).map { (victimWatch, Self.message("v\(round)-\($0)")) } }
        _ = Self.time(&h, (0..<20_000).map { (attacker, Self.message("a-\($0)", wantsReply: true)) })
        #expect(h.state.pendingReplyCount == 20_000)
        let after = Self.fastest(&h) { round in (0..<2000).map { (victimWatch, Self.message("w\(round)-\($0)")) } }
        #expect(after < before * 5 + .milliseconds(50), "2000 frames took \(before) before, \(after) with 20,000 requests pending")
        _ = victimPhone
        // They still time out, all of them, and only then.
        h.advance(ms: 9_999)
        #expect(h.tick().errors(to: attacker).isEmpty)
        h.advance(ms: 1)
        #expect(h.tick().errors(to: attacker).count == 20_000)
        #expect(h.state.pendingReplyCount == 0 && h.state.nextDeadline == nil)
    }

    /// The next deadline is always a live request's: answering the earliest moves it on, and a
    /// request answered early does not time out when its deadline passes.
    @Test func answeredRequestsLeaveTheDeadlinesAndTheRestTimeOutInOrder() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let start = h.now
        for (i, id) in ["p-1", "p-2", "p-3", "p-4"].enumerated() {
            if i > 0 { h.advance(ms: 100) }
            h.send(phone, id: id, mode: .message, wantsReply: true)
        }
        #expect(h.state.nextDeadline == start.adding(milliseconds: 10_000))
        h.send(watch, .reply(ClientReply(id: "w-1", re: "p-1", payload: Payload(kind: "r"))))
        #expect(h.state.nextDeadline == start.adding(milliseconds: 10_100))
        h.send(watch, .reply(ClientReply(id: "w-3", re: "p-3", payload: Payload(kind: "r"))))
        #expect(h.state.nextDeadline == start.adding(milliseconds: 10_100))
        h.advance(ms: 10_000)
        #expect(h.tick().errors(to: phone).map(\.re) == ["p-2", "p-4"])
        #expect(h.state.nextDeadline == nil)
        // The watch leaving fails what it owes, and nothing is left behind.
        h.send(phone, id: "p-5", mode: .message, wantsReply: true)
        #expect(h.close(watch).errors(to: phone).map(\.re) == ["p-5"])
        #expect(h.state.pendingReplyCount == 0 && h.state.nextDeadline == nil)
    }

    /// Unpairing drops the pair's requests and no other pair's.
    @Test func unpairingDropsOnlyItsOwnPairsRequests() {
        var h = RelayHarness()
        let (phoneA, _) = h.pairDevices()
        h.send(phoneA, id: "a-1", mode: .message, wantsReply: true)
        let (phoneB, _) = h.pairDevices()
        h.send(phoneB, id: "b-1", mode: .message, wantsReply: true)
        h.send(phoneA, .unpair(Request(id: "a-u")))
        #expect(h.state.pendingReplyCount == 1)
        h.advance(ms: 10_000)
        #expect(h.tick().errors(to: phoneB).map(\.re) == ["b-1"])
        #expect(h.tick().errors(to: phoneA).isEmpty)
    }

    /// `cancel` of an item already cancelled (or of an id never sent), and a retried
    /// complication, are answered without walking the 10,000 unsent items of the direction,
    /// whose ids the sender chose to share a 60-character prefix.
    @Test func cancelsAndRetriesDoNotWalkAFullQueue() {
        var h = RelayHarness()  // the default quota: 10,000 items per direction
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        func id(_ i: Int) -> String {
            let digits = String(i)
            return String(repeating: "0", count: 64 - digits.count) + digits
        }
        func cancels(_ target: String) -> (Int) -> [(LinkID, [UInt8])] {
            { round in (0..<300).map { (phone, Array(#"{"type":"cancel","id":"c-\#(target.suffix(5))-\#(round)-\#($0)","target":"\#(target)"}"#.utf8)) } }
        }
        func retries(_ target: String) -> (Int) -> [(LinkID, [UInt8])] {
            { _ in (0..<300).map { _ in (phone, Array(#"{"type":"send","id":"\#(target)","mode":"complication","payload":{"kind":"k"}}"#.utf8)) } }
        }
        // Before: one complication held, retried, then cancelled and cancelled again.
        let alone = id(10_000)
        #expect(h.send(phone, id: alone, mode: .complication).frames(to: phone).first?.accepted != nil)
        let retryBefore = Self.fastest(&h, retries(alone))
        let cancelBefore = Self.fastest(&h, cancels(alone))
        #expect(h.outstanding(phone) == [])
        _ = Self.time(&h, (0..<10_000).map { (phone, Array(#"{"type":"send","id":"\#(id($0))","mode":"userInfo","payload":{"kind":"k"}}"#.utf8)) })
        #expect(h.state.queuedItemCount == 10_000)
        // The last one is a userInfo now: the retry as a complication says it was demoted, as before.
        #expect(h.send(phone, id: id(9_999), mode: .complication).frames(to: phone).first?.accepted?.fallback == .userInfo)
        let retryAfter = Self.fastest(&h, retries(id(9_999)))
        #expect(h.send(phone, .cancel(Cancel(id: "c-first", target: id(9_999)))).frames(to: phone) == [.cancelled(Answer(re: "c-first"))])
        let cancelAfter = Self.fastest(&h, cancels(id(9_999)))
        #expect(retryAfter < retryBefore * 5 + .milliseconds(50), "retries: \(retryBefore) before, \(retryAfter) after")
        #expect(cancelAfter < cancelBefore * 5 + .milliseconds(50), "cancels: \(cancelBefore) before, \(cancelAfter) after")
        #expect(h.state.queuedItemCount == 9_999)
    }

    /// `outstanding` lists sent items, unsent complications and unsent items in the order
    /// accepted (it merges the few sent and complication items into the FIFO unsent ones).
    @Test func outstandingMergesSentComplicationsAndUnsentInAcceptanceOrder() {
        var config = RelayConfiguration()
        config.inFlightItems = 2
        var h = RelayHarness(configuration: config)
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "u-1", mode: .userInfo)
        h.send(phone, id: "c-1", mode: .complication)
        h.send(phone, id: "u-2", mode: .userInfo)
        h.send(phone, id: "x-1", mode: .context)
        h.send(phone, id: "c-2", mode: .complication)
        h.send(phone, id: "u-3", mode: .userInfo)
        let order = ["u-1", "c-1", "u-2", "x-1", "c-2", "u-3"]
        #expect(h.outstanding(phone) == order)
        // Two complications go out first (the window is 2 items): sent now, still listed in place.
        let (watch2, out) = h.reconnect(.watch)
        #expect(out.delivers(to: watch2).map(\.id) == ["c-1", "c-2"])
        #expect(h.outstanding(phone) == order)
        h.restart()
        let (phone2, _) = h.reconnect(.phone)
        #expect(h.outstanding(phone2) == order)
    }

    /// `pair.begin` does not walk the relay's live codes (one per phone connection can be live):
    /// it swept them, and the address counts, on every such frame (and so did `pair.join`).
    @Test func pairingFramesDoNotWalkTheLiveCodes() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        func begins(_ round: Int) -> [(LinkID, [UInt8])] {
            (0..<2000).map { (phone, Array(#"{"type":"pair.begin","id":"b-\#(round)-\#($0)"}"#.utf8)) }
        }
        let beginsBefore = Self.fastest(&h, begins)
        // The relay's connection limit is 10,000: the phone above and 9,000 more.
        for i in 0..<9_000 {
            let (other, _) = h.connect(.phone, address: "10.\(i / 65_536).\(i / 256 % 256).\(i % 256)")
            _ = h.beginPairing(other)
        }
        #expect(h.state.pairingCodeCount == 9_001)
        let beginsAfter = Self.fastest(&h, begins)
        #expect(beginsAfter < beginsBefore * 5 + .milliseconds(50), "2000 pair.begin: \(beginsBefore) before, \(beginsAfter) with 9,001 live codes")
    }
}
