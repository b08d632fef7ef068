import Foundation
import Primitives
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// The console in a real browser: headless Chromium (Debian's `chromium`, installed by
/// `scripts/install-deps.sh`) driven over its DevTools pipe by `scripts/console_browser.py`.
@Suite(.timeLimit(.minutes(5)))
struct ConsoleBrowserTests {
    /// A watch face the test's watch publishes once the page is up.
    static let faceSVG = ##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="120" height="60" rx="10" fill="#1c1c1e"/><text x="12" y="36" fill="#fff" font-size="16">octocat 3</text></svg>"##

    @Test func thePageShowsThePairAndItsQueueAndSetsAFaultOnTheRelay() async throws {
        let relay = try await TestRelay.start { $0.console = ConsoleConfiguration(token: "browser-test") }
        let (phone, watch, _, _) = try await pairDevices(relay)
        // A userInfo the watch never acks: it stays queued, outstanding on the watch's connection.
        phone.send(userInfo("u-browser", 7))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
        #expect(d.id == "u-browser")
        let hub = try #require(relay.server.console)
        let found = LockedState<String?>(nil)
        let port = relay.server.port
        try await eventually(10, "the console's first snapshot") {
            let r = try await PlainHTTP.request(port: port, "/console/api/state?token=browser-test")
            let state = try JSONDecoder().decode(ConsoleJSON.State.self, from: Data(r.body.utf8))
            let id = state.pairs.first?.devices.first { $0.role == "watch" }?.id
            found.withLock { $0 = id }
            return id != nil
        }
        let device = try #require(found.withLock { $0 })

        let directory = TemporaryDirectory()
        let screenshot = ProcessInfo.processInfo.environment["WATCHRELAY_CONSOLE_SCREENSHOT"] ?? directory.path("console.png")
        let (process, output) = try startBrowser(
            relay, ["--item", "u-browser", "--device", device, "--screenshot", screenshot, "--live-item", "u-live", "--face"])
        // Once the page is up, the link changes under it: a queued item and the watch's faces
        // must appear without a reload (pushed by the relay's event stream).
        let first = try await output.line(startingWith: "", from: "console_browser.py", within: 60)
        try #require(first == "loaded", "console_browser.py: \(first)")
        phone.send(userInfo("u-live", 8))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        guard case .deliver(let live) = try await watch.next() else { throw TestFailure("deliver") }
        #expect(live.id == "u-live")
        watch.send(.faces(Faces(svg: Self.faceSVG)))
        try await expectSuccess(process, output)

        // The fault the page set reached the relay: it is in the plan, and the phone was told.
        let faults = hub.withPlan { $0.faults }
        #expect(faults.contains { $0.kind == .unreachable && $0.target == .device(DeviceID(device)) }, "\(faults)")
        guard case .peer(let p) = try await phone.next() else { throw TestFailure("peer") }
        #expect(p.connected && !p.reachable)
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG screenshot at \(screenshot)")
        await relay.stop()
    }

    /// One console page more than the relay serves (`maxEventStreams`): the page says its
    /// event stream was refused, and goes live by itself once a place is free.
    @Test func aPageOneTooManySaysItWasRefusedAndGoesLiveWhenAPlaceIsFree() async throws {
        let relay = try await TestRelay.start {
            $0.console = ConsoleConfiguration(token: "browser-test", maxEventStreams: 1, heartbeatMilliseconds: 200)
        }
        let holder = try await EventStreamClient.open(port: relay.server.port, "/console/api/events?token=browser-test")
        #expect(holder.status == 200)
        let (process, output) = try startBrowser(relay, ["--refused"])
        let first = try await output.line(startingWith: "", from: "console_browser.py", within: 60)
        try #require(first == "refused", "console_browser.py: \(first)")
        holder.close()
        try await expectSuccess(process, output)
        await relay.stop()
    }

    /// The frame log filtered on a pair with no frames (the busy pair's pushed them out of the
    /// log) shows none: the page kept the rows of its unfiltered stream, since the relay sent
    /// the new stream no `frames` event to replace them.
    @Test func aFrameFilterOnAPairWithNoFramesShowsNoFrames() async throws {
        let relay = try await TestRelay.start { $0.console = ConsoleConfiguration(token: "browser-test") }
        let (quietPhone, quietWatch, _, _) = try await pairDevices(relay)
        let (phone, watch, _, _) = try await pairDevices(relay)
        // 600 frames (send, accepted, deliver): more than the log keeps.
        for n in 0..<200 { phone.send(.send(Send(id: "m-\(n)", mode: .message, payload: Payload(kind: "tick")))) }
        for _ in 0..<200 {
            guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        }
        let port = relay.server.port
        let found = LockedState<String?>(nil)
        try await eventually(10, "the quiet pair in the console, with no frames") {
            let r = try await PlainHTTP.request(port: port, "/console/api/state?token=browser-test")
            let state = try JSONDecoder().decode(ConsoleJSON.State.self, from: Data(r.body.utf8))
            guard state.pairs.count == 2 else { return false }
            for pair in state.pairs {
                let f = try await PlainHTTP.request(port: port, "/console/api/frames?token=browser-test&pair=\(pair.id)")
                if try JSONDecoder().decode(ConsoleJSON.Frames.self, from: Data(f.body.utf8)).frames.isEmpty {
                    found.withLock { $0 = pair.id }
                    return true
                }
            }
            return false
        }
        let quiet = try #require(found.withLock { $0 })
        let (process, output) = try startBrowser(relay, ["--empty-pair", quiet])
        try await expectSuccess(process, output)
        for device in [quietPhone, quietWatch, phone, watch] { device.connection.close() }
        await relay.stop()
    }

    /// A pair replaced by another between two pushes (the number of pairs unchanged) shows in
    /// the frame filter: the list was rebuilt only when the number changed, so it kept offering
    /// the gone pair and not the new one. The pair the log is filtered on stays, marked gone.
    @Test func aPairReplacedByAnotherShowsInTheFrameFilter() async throws {
        let relay = try await TestRelay.start { $0.console = ConsoleConfiguration(token: "browser-test") }
        let (phone, watch, _, _) = try await pairDevices(relay)
        let port = relay.server.port
        let first = LockedState<String?>(nil)
        try await eventually(10, "the pair in the console") {
            let r = try await PlainHTTP.request(port: port, "/console/api/state?token=browser-test")
            let state = try JSONDecoder().decode(ConsoleJSON.State.self, from: Data(r.body.utf8))
            first.withLock { $0 = state.pairs.first?.id }
            return state.pairs.count == 1
        }
        let gone = try #require(first.withLock { $0 })
        let (process, output) = try startBrowser(relay, ["--pair-replaced", gone])
        _ = try await output.line(startingWith: "loaded", from: "console_browser.py", within: 30)
        phone.send(.unpair(Request(id: "u-1")))
        while true { if case .unpaired = try await phone.next() { break } }
        let (newPhone, newWatch, _, _) = try await pairDevices(relay)
        try await expectSuccess(process, output)
        for device in [watch, newPhone, newWatch] { device.connection.close() }
        await relay.stop()
    }

    /// `scripts/console_browser.py` on the relay's console URL with `arguments`.
    func startBrowser(_ relay: TestRelay, _ arguments: [String]) throws -> (TestProcess, ChildOutput) {
        let url = try #require(relay.server.consoleURL)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", repositoryRoot.appendingPathComponent("scripts/console_browser.py").path, url]
            + arguments + ["--timeout", String(30 * timeoutScale)]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        return (process, ChildOutput(reading: stdout.fileHandleForReading))
    }

    /// Waits for the script's end: exit 0 and its JSON report `"ok": true`.
    func expectSuccess(_ process: TestProcess, _ output: ChildOutput) async throws {
        await waitForExit(process)
        try await eventually(10, "the end of console_browser.py's output") { output.isClosed }
        let text = output.takeAll().joined(separator: "\n")
        #expect(process.terminationStatus == 0, "console_browser.py: \(text)")
        #expect(text.contains(#""ok": true"#), "\(text)")
    }
}
