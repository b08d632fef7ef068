import Foundation
import Testing
import WatchRelayTesting

// An app that reads `WCSession.default`, run as a process of its own on the link, as an app's
// own test would: `wc-probe` (Tests/WatchConnectivityProbe) plays the watch app.

private let scale = Double(ProcessInfo.processInfo.environment["WATCHRELAY_TIMEOUT_SCALE"] ?? "") ?? 1
private let wait = 20 * scale

@Suite struct WatchRelayAppProcessTests {
    /// The watch app process activates on the link, gets the phone's userInfo, sends its own,
    /// and quits on SIGTERM (a Foundation `Process` started from a test's task inherits the pool
    /// thread's blocked SIGTERM: `terminate()` did nothing and `waitUntilExit()` never returned).
    @Test func aWatchAppProcessTalksToThePhoneAndQuitsOnSIGTERM() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = Connector(link.makeSession(.phone))
        try await link.activate(phone.session)
        let watchApp = try link.launch(.watch, executable: WatchRelayTestLink.builtProduct("wc-probe"))
        try await watchApp.waitForOutput("activated", within: wait)

        phone.session.transferUserInfo(["n": 7])
        try await watchApp.waitForOutput("userInfo 7", within: wait)
        #expect(watchApp.write(line: "userInfo 8"))  // typed into the app: it queues ["n": 8]
        try await link.waitUntil("the watch app's userInfo at the phone", within: wait) { phone.receivedUserInfo == [8] }
        try await watchApp.waitForOutput("finished 8", within: wait)

        try await watchApp.terminate(within: wait)
        #expect(!watchApp.isRunning)
        #expect(watchApp.terminationReason == .uncaughtSignal && watchApp.terminationStatus == SIGTERM)
        #expect(!watchApp.write(line: "userInfo 9"))
        await phone.session.close()
        await link.stop()
    }

    /// The app starts with no blocked signal, whichever pool thread launched it.
    @Test func anAppProcessStartsWithNoBlockedSignal() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let shell = try link.launch(.phone, executable: "/bin/sh", arguments: ["-c", "grep SigBlk /proc/self/status; env"])
        await shell.ended()
        #expect(shell.terminationStatus == 0)
        #expect(shell.output.contains("SigBlk:\t0000000000000000"))
        #expect(shell.output.contains("WATCHRELAY_ROLE=phone"))
        #expect(shell.output.contains("WATCHRELAY_STATE=\(link.phoneState)"))
        await link.stop()
    }

    /// An app that ends without printing what the test waits for fails the wait at once, with its
    /// standard error; a missing executable fails the launch.
    @Test func aWaitOnAnAppThatEndedSaysSo() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let app = try link.launch(.watch, executable: "/bin/sh", arguments: ["-c", "echo no relay here >&2; exit 3"])
        await #expect(throws: WatchRelayTestLinkError.self) { try await app.waitForOutput("activated", within: wait) }
        do {
            try await app.waitForOutput("activated", within: wait)
        } catch {
            #expect("\(error)".contains("ended (status 3)"))
            #expect("\(error)".contains("no relay here"))
        }
        #expect(throws: (any Error).self) { _ = try link.launch(.watch, executable: link.directory + "/missing-app") }
        await link.stop()
    }
}

@Suite struct WatchRelayTestLinkStopTests {
    private struct Failure: Error {}

    /// `stop()` closes the sessions the link made and kills the app processes it launched that
    /// still run: a test that forgot one (or failed before closing it) leaves nothing running.
    @Test func stopClosesTheSessionsAndKillsTheAppsTheLinkMade() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = link.makeSession(.phone)
        try await link.activate(phone)
        let watchApp = try link.launch(.watch, executable: WatchRelayTestLink.builtProduct("wc-probe"))
        try await watchApp.waitForOutput("activated", within: wait)

        await link.stop()
        #expect(phone.activationState == .notActivated)
        #expect(!watchApp.isRunning)
        #expect(!link.isRelayRunning)
        #expect(!FileManager.default.fileExists(atPath: link.directory))
    }

    /// `withLink` stops the link when the test's body throws.
    @Test func withLinkStopsTheLinkWhenTheBodyThrows() async throws {
        var kept: (link: WatchRelayTestLink, session: WCSession)?
        do {
            try await WatchRelayTestLink.withLink(requestTimeoutSeconds: wait) { link in
                let session = link.makeSession(.watch)
                kept = (link, session)
                try await link.activate(session)
                throw Failure()
            }
            Issue.record("withLink returned although its body threw")
        } catch is Failure {}
        let (link, session) = try #require(kept)
        #expect(session.activationState == .notActivated)
        #expect(!link.isRelayRunning)
        #expect(!FileManager.default.fileExists(atPath: link.directory))

        let answer = try await WatchRelayTestLink.withLink(requestTimeoutSeconds: wait) { link in
            try await link.activate(link.makeSession(.phone))
            return link.directory
        }
        #expect(!FileManager.default.fileExists(atPath: answer))
    }
}
