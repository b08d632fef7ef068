import RelayProtocol
import Testing

@testable import RelayClient

/// hello/welcome/resume, reconnect back-off, replacement and close: no sockets, no sleeping.
@Suite struct SessionCoreConnectionTests {
    @Test func activateConnectsOnceAndCompletesOnWelcome() {
        var h = CoreHarness()
        let (ticket, first) = h.command(.activate)
        #expect(first.connects == 1)
        #expect(first.completion(ticket) == nil)
        let (second, again) = h.command(.activate)
        #expect(again.connects == 0)
        h.feed(.connected)
        let welcomed = h.frame(h.welcome(paired: false))
        #expect(welcomed.completion(ticket) == .success(.done))
        #expect(welcomed.completion(second) == .success(.done))
        #expect(welcomed.events.contains(.activated(paired: false)))
        #expect(h.core.activationState == .activated)
    }

    @Test func helloOfANewDeviceCarriesNoTokenAndNoLastSeq() throws {
        var h = CoreHarness(role: .phone)
        _ = h.command(.activate)
        let hello = try #require(h.feed(.connected).sentFrames.first)
        guard case .hello(let frame) = hello else { Issue.record("not a hello: \(hello)"); return }
        #expect(frame.token == nil && frame.lastSeq == nil && frame.role == .phone && frame.deviceName == "Phone")
        #expect(frame.foreground == nil)
    }

    @Test func helloOfAPairedDeviceResumesFromItsDurableLastSeq() throws {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok", pairID: "p", peerName: "Phone", lastSeq: 41))
        _ = h.command(.activate)
        guard case .hello(let frame)? = h.feed(.connected).sentFrames.first else {
            Issue.record("no hello")
            return
        }
        #expect(frame.token == "tok" && frame.lastSeq == 41 && frame.foreground == true)
    }

    @Test func aWatchStartingInTheBackgroundSaysSoInItsHello() {
        var h = CoreHarness(foreground: false)
        _ = h.command(.activate)
        guard case .hello(let frame)? = h.feed(.connected).sentFrames.first else {
            Issue.record("no hello")
            return
        }
        #expect(frame.foreground == false)
    }

    @Test func welcomeSetsLimitsReachabilityAndComplicationsLeft() {
        var h = CoreHarness(role: .phone, restored: SessionSnapshot(token: "tok"))
        let limits = Limits(messageBytes: 100, complicationsPerDay: 50, complicationsRemaining: 12)
        let actions = h.activate(reachable: true, limits: limits)
        #expect(h.core.limits == limits)
        #expect(h.core.remainingComplicationUserInfoTransfers == 12)
        #expect(h.core.isReachable)
        #expect(actions.events == [.reachabilityChanged(true), .activated(paired: true)])
    }

    @Test func welcomeUnpairedForgetsATokenTheRelayNoLongerKnows() {
        var h = CoreHarness(restored: SessionSnapshot(token: "old", pairID: "p", lastSeq: 9))
        let actions = h.activate(paired: false)
        #expect(!h.core.isPaired && h.core.token == nil && h.core.lastSeq == 0)
        #expect(actions.writes.first?.records.contains(.token(nil)) == true)
        #expect(actions.writes.first?.records.contains(.lastSeq(0)) == true)
    }

    @Test func welcomeContextAlreadyHandledBecomesTheReceivedContext() {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok", lastSeq: 5))
        let context = deliver(4, .context, kind: "favorites.snapshot")
        h.activate(context: context)
        #expect(h.core.receivedApplicationContext == context.payload)
    }

    @Test func welcomeContextNotYetHandledWaitsForItsDeliver() {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok", lastSeq: 5))
        h.activate(context: deliver(6, .context))
        #expect(h.core.receivedApplicationContext == nil)
    }

    @Test func aWelcomeWithoutAHelloIsIgnored() {
        var h = CoreHarness()
        _ = h.command(.activate)
        let actions = h.frame(h.welcome(paired: false))
        #expect(actions.events.isEmpty)
        #expect(h.core.activationState == .notActivated)
    }

    @Test func aDroppedConnectionIsReportedAndRetriedAfterTheBackoff() {
        var h = CoreHarness.paired()
        let lost = h.feed(.closed(code: 1006))
        #expect(lost.events == [.reachabilityChanged(false), .disconnected])
        #expect(h.core.activationState == .inactive)
        #expect(lost.connects == 0)
        let deadline = lost.deadlines.last ?? nil
        // The first delay is 1 s ± 20 %.
        #expect(deadline.map { $0 >= h.now + .milliseconds(800) && $0 <= h.now + .milliseconds(1200) } == true)
        #expect(h.advance(.milliseconds(700)).connects == 0)
        #expect(h.advance(.milliseconds(600)).connects == 1)
    }

    @Test func backoffGrowsAndTheLastDelayRepeats() {
        var h = CoreHarness(backoff: [1, 2])
        _ = h.command(.activate)
        var delays: [Duration] = []
        for _ in 0..<4 {
            let failed = h.feed(.connectFailed())
            guard let at = failed.deadlines.last ?? nil else {
                Issue.record("no back-off deadline")
                return
            }
            delays.append(at - h.now)
            h.now = at
            #expect(h.feed(.tick).connects == 1)
        }
        #expect(delays[0] >= .milliseconds(800) && delays[0] <= .milliseconds(1200))
        for d in delays.dropFirst() { #expect(d >= .milliseconds(1600) && d <= .milliseconds(2400)) }
    }

    @Test func theJitterComesFromTheInjectedSeed() {
        func firstDelay(seed: UInt64) -> Duration? {
            var h = CoreHarness(seed: seed)
            _ = h.command(.activate)
            return (h.feed(.connectFailed()).deadlines.last ?? nil).map { $0 - h.now }
        }
        #expect(firstDelay(seed: 1) == firstDelay(seed: 1))
        #expect(firstDelay(seed: 1) != firstDelay(seed: 2))
    }

    @Test func aWelcomeResetsTheBackoff() {
        var h = CoreHarness(backoff: [1, 8])
        _ = h.command(.activate)
        h.feed(.connectFailed())
        h.advance(.seconds(2))
        h.feed(.connected)
        h.frame(h.welcome(paired: false))
        let lost = h.feed(.closed(code: 1006))
        let at = lost.deadlines.last ?? nil
        #expect(at.map { $0 - h.now <= .milliseconds(1200) } == true)
    }

    @Test func replacedByAnotherConnectionItNeverReconnects() {
        var h = CoreHarness.paired()
        let lost = h.feed(.closed(code: 4001))
        #expect(lost.events.contains(.error(.replaced)) && !lost.events.contains(.disconnected))
        #expect(lost.deadlines.allSatisfy { $0 == nil })
        #expect(h.advance(.seconds(60)).connects == 0)
        let (ticket, actions) = h.command(.activate)
        #expect(actions.failure(ticket) == .notActivated)
    }

    @Test func closeDisconnectsFailsWaitersAndStopsReconnecting() {
        var h = CoreHarness.paired()
        let (send, _) = h.command(.transferUserInfo(Payload(kind: "x")))
        let (closeTicket, closed) = h.command(.close)
        #expect(closed.completion(closeTicket) == .success(.done))
        #expect(closed.failure(send) == .disconnected)
        #expect(closed.disconnects)
        #expect(closed.events.contains(.disconnected))
        #expect(h.feed(.closed(code: 1000)).isEmpty)
        #expect(h.advance(.seconds(60)).connects == 0)
        #expect(!h.core.isRunning)
    }

    @Test func closeBeforeActivateNeedsNoDisconnect() {
        var h = CoreHarness()
        let (ticket, actions) = h.command(.close)
        #expect(actions.completion(ticket) == .success(.done))
        #expect(!actions.disconnects)
    }

    @Test func activationTimesOutButTheSessionKeepsTrying() {
        var h = CoreHarness(requestTimeout: .seconds(3))
        let (ticket, _) = h.command(.activate)
        h.feed(.connectFailed())
        var timedOut: [SessionAction] = []
        for _ in 0..<4 { timedOut += h.advance(.seconds(1)) }
        #expect(timedOut.failure(ticket) == .timeout("the relay's welcome"))
        #expect(timedOut.connects >= 1)
        h.feed(.connected)
        #expect(h.frame(h.welcome(paired: false)).events.contains(.activated(paired: false)))
    }

    /// `watchrelay pair` against a port nobody listens on said only "timed out waiting for the
    /// relay's welcome": the timeout names why the last attempt failed, until one opens.
    @Test func aWelcomeTimeoutNamesTheLastConnectionFailure() {
        var h = CoreHarness(requestTimeout: .seconds(3))
        let (first, _) = h.command(.activate)
        h.feed(.connectFailed(reason: "connection refused"))
        var timedOut: [SessionAction] = []
        for _ in 0..<4 { timedOut += h.advance(.seconds(1)) }
        #expect(timedOut.failure(first) == .timeout("the relay's welcome (the last connection attempt: connection refused)"))
        h.feed(.connected)
        h.feed(.closed(code: 1006))
        let (second, _) = h.command(.activate)
        timedOut = []
        for _ in 0..<4 { timedOut += h.advance(.seconds(1)) }
        #expect(timedOut.failure(second) == .timeout("the relay's welcome"), "a connection opened since")
    }

    @Test func aConnectionThatOpensAfterCloseIsNotGreeted() {
        var h = CoreHarness()
        _ = h.command(.activate)
        _ = h.command(.close)
        #expect(h.feed(.connected).sentFrames.isEmpty)
    }

    @Test func helloIDsComeFromTheInjectedPrefix() {
        var h = CoreHarness()
        _ = h.command(.activate)
        guard case .hello(let hello)? = h.feed(.connected).sentFrames.first else {
            Issue.record("no hello")
            return
        }
        #expect(hello.id == "hello-t-1")
    }

    @Test func presenceGoesToTheRelayOnlyWhenActivated() {
        var h = CoreHarness()
        let (t1, before) = h.command(.setForeground(false))
        #expect(before.completion(t1) == .success(.done) && before.sentFrames.isEmpty)
        #expect(!h.core.isForeground)
        h.activate(paired: false)
        let (_, after) = h.command(.setForeground(true))
        #expect(after.sentFrames == [.state(StateChange(foreground: true))])
    }

    @Test func peerFramesChangeReachabilityOnce() {
        var h = CoreHarness.paired(role: .phone)
        let away = h.frame(.peer(PeerChange(connected: true, reachable: false)))
        #expect(away.events == [.reachabilityChanged(false)])
        #expect(h.frame(.peer(PeerChange(connected: true, reachable: false))).events.isEmpty)
    }

    @Test func onlyOneDeadlineIsArmedAtATimeAndItIsTheEarliest() {
        var h = CoreHarness.paired(role: .phone)
        let (_, first) = h.command(.transferUserInfo(Payload(kind: "a")))
        let armed = first.deadlines
        #expect(armed == [h.now + .seconds(10)])
        h.now += .seconds(1)
        let (_, second) = h.command(.transferUserInfo(Payload(kind: "b")))
        #expect(second.deadlines.isEmpty)  // the earlier one still stands
    }
}
