import Foundation
import RelayConsole
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// The console's server-sent events over real HTTP on loopback: the token, and events pushed
/// after a pairing, a queued item, frames and a fault (no polling by the client).
@Suite(.timeLimit(.minutes(5)))
struct ConsoleEventsTests {
    static let token = "console-events-token"

    func startRelay() async throws -> TestRelay {
        try await TestRelay.start { $0.console = ConsoleConfiguration(token: ConsoleEventsTests.token) }
    }

    func state(_ data: String?) -> ConsoleJSON.State? {
        data.flatMap { try? JSONDecoder().decode(ConsoleJSON.State.self, from: Data($0.utf8)) }
    }

    @Test func theEventStreamNeedsTheToken() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        #expect(try await EventStreamClient.open(port: port, "/console/api/events").status == 401)
        #expect(try await EventStreamClient.open(port: port, "/console/api/events?token=wrong").status == 401)
        let bearer = try await EventStreamClient.open(
            port: port, "/console/api/events", headers: ["Authorization: Bearer \(Self.token)"])
        #expect(bearer.status == 200 && bearer.headers.lowercased().contains("content-type: text/event-stream"))
        let first = await bearer.next()
        #expect(first?.name == "state" && state(first?.data)?.pairs.isEmpty == true)
        #expect(await bearer.next()?.name == "faces")
        await relay.stop()
    }

    @Test func aPairingAQueuedItemFramesAndAFaultArriveAsEvents() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        let events = try await EventStreamClient.open(port: port, "/console/api/events?token=\(Self.token)")
        #expect(events.status == 200)

        let (phone, watch, _, _) = try await pairDevices(relay)
        let paired = await events.first("state") { self.state($0)?.pairs.count == 1 }
        let pair: ConsoleJSON.Pair = try #require(state(paired?.data)?.pairs.first)
        #expect(pair.devices.allSatisfy { $0.connected })

        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer: watch gone
        phone.send(userInfo("u-live", 1))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        let queued = await events.first("state") { data in
            self.state(data)?.pairs.first?.directions.contains { $0.items.contains { $0.id == "u-live" } }
                == true
        }
        #expect(queued != nil, "the queued item arrives as a state event")
        let frames = await events.first("frames") { $0.contains("u-live") }
        let sent = try #require(frames.flatMap { try? JSONDecoder().decode(ConsoleJSON.Frames.self, from: Data($0.data.utf8)) })
        #expect(sent.frames.contains { $0.type == "send" })

        let set = try await PlainHTTP.request(
            port: port, "/console/api/faults?token=\(Self.token)&target=pair:\(pair.id)&kind=delay&ms=50", method: "POST")
        #expect(set.status == 200)
        let faulted = await events.first("state") { self.state($0)?.faults.first?.kind == "delay" }
        #expect(faulted != nil, "the fault arrives as a state event")
        await relay.stop()
    }

    @Test func aWatchsFacesShowInTheConsoleAndNeverReachThePhone() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        let events = try await EventStreamClient.open(port: port, "/console/api/events?token=\(Self.token)")
        let (phone, watch, _, _) = try await pairDevices(relay)
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg"><text>faces-1</text></svg>"#
        watch.send(.faces(Faces(id: "w-faces", svg: svg)))
        // The watch's next frame is delivered; nothing about the faces reached the phone first.
        watch.send(userInfo("u-after-faces", 1))
        guard case .accepted = try await watch.next() else { throw TestFailure("accepted") }
        guard case .deliver(let d) = try await phone.next() else { throw TestFailure("the userInfo, not the faces") }
        #expect(d.id == "u-after-faces")

        let pushed = await events.first("faces") { $0.contains("faces-1") }
        let faces = try #require(pushed.flatMap { try? JSONDecoder().decode([ConsoleJSON.Face].self, from: Data($0.data.utf8)) })
        #expect(faces.count == 1 && faces.first?.watch == "Test watch" && faces.first?.svg == svg)
        let state = try await PlainHTTP.request(port: port, "/console/api/state?token=\(Self.token)")
        #expect(state.body.contains("faces-1"))

        // Only from a watch, and not too large.
        phone.send(.faces(Faces(id: "p-faces", svg: svg)))
        guard case .error(let fromPhone) = try await phone.next() else { throw TestFailure("error") }
        #expect(fromPhone.code == .notSupported && fromPhone.re == "p-faces")
        watch.send(.faces(Faces(id: "w-big", svg: String(repeating: "x", count: Faces.maxSVGBytes + 1))))
        guard case .error(let tooLarge) = try await watch.next() else { throw TestFailure("error") }
        #expect(tooLarge.code == .payloadTooLarge && tooLarge.re == "w-big")
        await relay.stop()
    }

    /// `maxEventStreams` open at once, one more refused with 503 and `Retry-After`; open streams
    /// get heartbeats, and a page that went away without a word frees its place.
    @Test func theMostEventStreamsAreServedAndAPageThatWentAwayFreesItsPlace() async throws {
        let relay = try await TestRelay.start {
            $0.console = ConsoleConfiguration(token: ConsoleEventsTests.token, maxEventStreams: 2, heartbeatMilliseconds: 200)
        }
        let port = relay.server.port
        let path = "/console/api/events?token=\(Self.token)"
        let first = try await EventStreamClient.open(port: port, path)
        let second = try await EventStreamClient.open(port: port, path)
        #expect(first.status == 200 && second.status == 200)
        let refused = try await PlainHTTP.request(port: port, path)
        #expect(refused.status == 503 && refused.headers.lowercased().contains("retry-after: 5"))
        #expect(refused.body.contains("2 console event streams are open"), "\(refused.body)")
        #expect(try await PlainHTTP.request(port: port, "/metrics").body.contains("watchrelay_console_event_streams 2\n"))

        for _ in 0..<50 where second.comments == 0 { _ = await second.next(within: 0.2) }
        #expect(second.comments > 0, "heartbeats on a stream with nothing to push")
        first.close()
        try await eventually(10, "a place for a new stream") {
            try await EventStreamClient.open(port: port, path).status == 200
        }
        await relay.stop()
    }
}
