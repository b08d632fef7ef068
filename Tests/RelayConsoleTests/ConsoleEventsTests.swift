@testable import RelayConsole
import RelayCore
import RelayProtocol
import Testing

@testable import WebSocketTransport

/// The hub's side of the event stream as values: when a push is due (coalesced), what a
/// subscriber gets first, and that a push carries only new frames.
@Suite struct ConsoleHubEventsTests {
    func at(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSinceEpoch: ms) }
    let empty = RelayInspection(pairs: [], unpairedConnections: 0)

    @Test func aPushIsDueOnlyAfterAChangeAndAtMostOncePerInterval() throws {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t"), seed: 1)
        #expect(hub.pushDelay(now: at(1_000)) == nil, "nothing changed: no push, no timer")
        hub.noteChange()
        #expect(hub.pushDelay(now: at(1_000)) == 0)
        hub.publish(empty, at: at(1_000), heldFrames: 0)
        #expect(hub.pushDelay(now: at(1_010)) == nil)
        try hub.set(Fault(.unreachable, on: .pair(PairID("p")), at: at(1_010)))
        #expect(hub.pushDelay(now: at(1_010)) == ConsoleEvents.pushInterval - 10, "coalesced behind the last push")
        #expect(hub.pushDelay(now: at(1_000 + ConsoleEvents.pushInterval)) == 0)
    }

    @Test func aSubscriberGetsTheStateFirstThenOnlyNewFrames() throws {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t"), seed: 1)
        hub.logFrame(Array(#"{"type":"hello","id":"h-1"}"#.utf8), direction: "in", link: LinkID(1), member: nil, at: at(1))
        let stream = HTTPStream()
        #expect(hub.subscribe(stream, pair: nil))
        #expect(hub.subscriberCount == 1)
        let first = String(decoding: stream.take(upTo: 1 << 20).bytes, as: UTF8.self)
        #expect(first.hasPrefix("retry: 1000\n\nevent: state\ndata: {"))
        #expect(first.contains("event: faces\ndata: []\n\n") && first.contains("h-1"))
        hub.logFrame(Array(#"{"type":"pair.begin","id":"pb-1"}"#.utf8), direction: "in", link: LinkID(1), member: nil, at: at(2))
        hub.publish(empty, at: at(3), heldFrames: 0)
        let pushed = String(decoding: stream.take(upTo: 1 << 20).bytes, as: UTF8.self)
        #expect(pushed.hasPrefix("event: state\n") && pushed.contains("event: frames\n"))
        #expect(pushed.contains("pb-1") && !pushed.contains("h-1"), "only the frame not sent before")
        #expect(!pushed.contains("event: faces"), "faces only when they changed")
        stream.close()
        hub.noteChange()
        hub.publish(empty, at: at(200), heldFrames: 0)
        #expect(hub.subscriberCount == 0, "a closed stream is forgotten at the next push")
    }

    /// A new stream gets a `frames` event even when it has no frames to show: it is what tells
    /// the page to drop the rows of its previous stream (another pair's, or a relay's before a
    /// restart), which a page filtering on a pair with no frames kept showing.
    @Test func aNewStreamGetsAFramesEventEvenWithNoFrames() {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t"), seed: 1)
        hub.logFrame(
            Array(#"{"type":"ack","id":"a-1"}"#.utf8), direction: "in", link: LinkID(1),
            member: (DeviceID("d-1"), PairID("p-busy"), .watch), at: at(1))
        let stream = HTTPStream()
        #expect(hub.subscribe(stream, pair: PairID("p-quiet")))
        let first = String(decoding: stream.take(upTo: 1 << 20).bytes, as: UTF8.self)
        #expect(first.hasSuffix("event: frames\ndata: {\"frames\":[]}\n\n"), "\(first)")
        #expect(!first.contains("a-1"))
    }

    /// When each device was last seen is kept for the devices the relay has paired: a device
    /// that left (unpaired, or a pair made and dropped by a script) stayed in the hub for as
    /// long as the relay ran.
    @Test func aDeviceNoLongerPairedIsForgotten() {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t"), seed: 1)
        for n in 0..<3 {
            hub.logFrame(
                Array(#"{"type":"ack","id":"a-1"}"#.utf8), direction: "in", link: LinkID(UInt64(n + 1)),
                member: (DeviceID("d-\(n)"), PairID("p-\(n)"), .watch), at: at(1))
        }
        #expect(hub.state.withLock { $0.lastSeen.count } == 3)
        hub.publish(empty, at: at(2), heldFrames: 0)
        #expect(hub.state.withLock { $0.lastSeen.count } == 0)
    }

    /// At most `maxEventStreams` open at once; a closed one frees its place.
    @Test func oneStreamMoreThanTheMostIsRefusedUntilOneCloses() {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t", maxEventStreams: 2), seed: 1)
        let streams = (0..<3).map { _ in HTTPStream() }
        #expect(hub.subscribe(streams[0], pair: nil) && hub.subscribe(streams[1], pair: nil))
        #expect(!hub.subscribe(streams[2], pair: nil))
        #expect(streams[2].take(upTo: 1 << 20).bytes.isEmpty, "a refused stream gets nothing")
        streams[0].close()
        #expect(hub.subscribe(streams[2], pair: nil), "the closed stream's place is free")
        #expect(hub.subscriberCount == 2)
    }

    /// A heartbeat only while streams are open, only after they got nothing for the interval
    /// (a push counts), and it is an SSE comment.
    @Test func aHeartbeatGoesToStreamsThatGotNothingForTheInterval() {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t", heartbeatMilliseconds: 1_000), seed: 1)
        #expect(hub.heartbeat(now: at(10_000)) == nil, "no stream: no timer")
        let stream = HTTPStream()
        #expect(hub.subscribe(stream, pair: nil))
        _ = stream.take(upTo: 1 << 20)
        #expect(hub.heartbeat(now: at(10_000)) == 1_000, "never beat: due at once, then in an interval")
        #expect(stream.take(upTo: 1 << 20).bytes == Array(":\n\n".utf8))
        #expect(hub.heartbeat(now: at(10_400)) == 600)
        #expect(stream.take(upTo: 1 << 20).bytes.isEmpty)
        hub.noteChange()
        hub.publish(empty, at: at(10_900), heldFrames: 0)
        _ = stream.take(upTo: 1 << 20)
        #expect(hub.heartbeat(now: at(11_000)) == 900, "a push is a sign of life too")
        #expect(hub.heartbeat(now: at(11_900)) == 1_000)
        #expect(stream.take(upTo: 1 << 20).bytes == Array(":\n\n".utf8))
        stream.close()
        #expect(hub.heartbeat(now: at(20_000)) == nil, "the closed stream is forgotten")
    }

    func shown(_ hub: ConsoleHub) -> ConsoleJSON.State {
        hub.state.withLock { ConsoleJSON.state($0) }
    }

    /// A cluster node's console: leading shows only with the new engine's first inspection
    /// (never an old or empty one read as the leader's), and stepping down empties what it
    /// shows, clears its faults and refuses new ones.
    @Test func aClusterNodeShowsLeadingOnlyWithItsEnginesFirstInspectionAndStepsDownEmpty() throws {
        let hub = ConsoleHub(configuration: ConsoleConfiguration(token: "t"), seed: 1)
        #expect(shown(hub).node == nil && hub.appliesFaults, "a single relay: no node, faults apply")
        hub.setNode("a", leads: false, at: at(1))
        #expect(shown(hub).node == ConsoleJSON.Node(id: "a", leads: false))
        #expect(!hub.appliesFaults, "an edge applies no faults")

        hub.setNode("a", leads: true, at: at(2))
        #expect(shown(hub).node?.leads == false, "not before the engine published")
        hub.publish(RelayInspection(pairs: [], unpairedConnections: 3), at: at(3), heldFrames: 0)
        #expect(shown(hub).node == ConsoleJSON.Node(id: "a", leads: true))
        #expect(shown(hub).unpairedConnections == 3 && hub.appliesFaults)
        try hub.set(Fault(.unreachable, on: .pair(PairID("p")), at: at(4)))

        let stream = HTTPStream()
        #expect(hub.subscribe(stream, pair: nil))
        _ = stream.take(upTo: 1 << 20)
        hub.setNode("a", leads: false, at: at(5))
        let pushed = String(decoding: stream.take(upTo: 1 << 20).bytes, as: UTF8.self)
        #expect(pushed.contains(#""leads":false"#), "the step-down is pushed at once")
        #expect(shown(hub).unpairedConnections == 0 && shown(hub).pairs.isEmpty, "nothing of the old engine shown")
        #expect(hub.withPlan { $0.faults }.isEmpty, "the next leadership starts with no faults")
    }
}
