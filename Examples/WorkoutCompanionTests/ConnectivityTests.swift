import Foundation
import Primitives
import Testing
import TestSupport
import WatchConnectivity
import WorkoutCompanion

/// The example's iOS and watchOS managers, written from Apple's documentation, against a real
/// relay: what Apple documents for each call is what the app sees.
@Suite(.timeLimit(.minutes(3)))
struct ConnectivityTests {
    /// Activation completes on a background queue; then the properties apps check before a
    /// transfer read as for a paired watch with the app installed and the complication on a face.
    @Test func bothAppsActivateOffTheMainThreadAndSeeAPairedInstalledCounterpart() async throws {
        let pair = try await CompanionPair.running()
        #expect(pair.phone.log.first == "activated paired=true installed=true main=false")
        #expect(pair.watch.log.first == "activated true companion=true")
        let phone = pair.phone.session
        #expect(pair.phone.canTalkToWatch)
        #expect(phone.isComplicationEnabled && phone.remainingComplicationUserInfoTransfers == 50)
        #expect(phone.watchDirectoryURL != nil)
        #expect(!phone.hasContentPending && phone.applicationContext.isEmpty && phone.receivedApplicationContext.isEmpty)
        try await eventually(10, "both reachable") { phone.isReachable && pair.watch.session.isReachable }
        await pair.stop()
    }

    /// Before `activate()` the context update throws `WCError` `.sessionNotActivated`, which
    /// `catch let error as WCError` sees with its code.
    @Test func aContextBeforeActivationThrowsSessionNotActivatedAsAWCError() async throws {
        let pair = try await CompanionPair.start()
        pair.phone.session.delegate = pair.phone
        #expect(pair.phone.publish(minutes: 1, goal: 30) == .failed(.sessionNotActivated))
        #expect(pair.phone.log == ["publish not now 7004"])
        #expect(!pair.phone.canTalkToWatch)
        await pair.stop()
    }

    /// The context reaches the watch's delegate, which stores it; both context properties hold it.
    @Test func aPublishedContextReachesTheWatchStoreAndBothContextProperties() async throws {
        let pair = try await CompanionPair.running()
        #expect(pair.phone.publish(minutes: 12, goal: 30) == .sent)
        try await eventually(10, "the watch stored 12") { pair.watch.store.minutes == 12 }
        #expect(pair.watch.log.contains { $0.hasPrefix("context 12 main=false") })
        #expect(pair.reloads.withLock { $0 } == 1)
        #expect(pair.phone.session.applicationContext["minutes"] as? Int == 12)
        #expect(pair.watch.session.receivedApplicationContext["goal"] as? Int == 30)
        #expect(pair.phone.session.applicationContext["sentAt"] is Date)
        await pair.stop()
    }

    /// A context sent while the watch app was not running is in `receivedApplicationContext`
    /// when its activation completes (Apple: "called shortly after you activate the session").
    @Test func aContextSentBeforeTheWatchRanIsThereAtItsActivation() async throws {
        let pair = try await CompanionPair.start()
        try await pair.startPhone()
        #expect(pair.phone.publish(minutes: 21, goal: 40) == .sent)
        try await pair.startWatch()
        try await eventually(10, "the watch stored 21") { pair.watch.store.minutes == 21 && pair.watch.store.goal == 40 }
        await pair.stop()
    }

    /// Queued workouts: the transfer object is outstanding until received, a cancelled one
    /// never arrives, the rest arrive in order and finish on the phone without error.
    @Test func queuedWorkoutsArriveInOrderACancelledOneNeverAndTheRestFinish() async throws {
        let pair = try await CompanionPair.start()
        try await pair.startPhone()
        let run = pair.phone.queue(workout: "run", minutes: 30)
        let bike = pair.phone.queue(workout: "bike", minutes: 45)
        pair.phone.queue(workout: "swim", minutes: 20)
        #expect(run.isTransferring && !run.isCurrentComplicationInfo && run.userInfo["workout"] as? String == "run")
        #expect(pair.phone.session.outstandingUserInfoTransfers.contains(bike))
        bike.cancel()
        #expect(!bike.isTransferring)
        #expect(pair.phone.session.outstandingUserInfoTransfers.map { $0.userInfo["workout"] as? String } == ["run", "swim"])
        try await pair.startWatch()
        try await eventually(10, "two workouts") { pair.watch.store.history.count == 2 }
        #expect(pair.watch.store.history == ["run", "swim"])
        try await eventually(10, "two didFinish") { pair.phone.finishedTransfers.count == 2 }
        #expect(pair.phone.finishedTransfers.map { $0.error } == [nil, nil])
        #expect(pair.phone.session.outstandingUserInfoTransfers.isEmpty && !run.isTransferring)
        await pair.stop()
    }

    /// With the complication on the face, a push spends one of the day's 50 and is the current
    /// complication info; the watch stores it.
    @Test func aComplicationPushSpendsTheBudgetAndReachesTheWatch() async throws {
        let pair = try await CompanionPair.running()
        let transfer = pair.phone.pushComplication(minutes: 25)
        #expect(transfer.isCurrentComplicationInfo)
        #expect(pair.phone.session.remainingComplicationUserInfoTransfers == 49)
        try await eventually(10, "the watch stored 25") { pair.watch.store.minutes == 25 }
        #expect(pair.watch.log.contains("complication 25") && pair.reloads.withLock { $0 } == 1)
        await pair.stop()
    }

    /// Without the complication on a face, `isComplicationEnabled` is false and the budget 0
    /// ("If the complication is not active, this property defaults to 0"): the app's fallback
    /// sends plain userInfo, which still arrives.
    @Test func withoutTheComplicationTheAppFallsBackToPlainUserInfo() async throws {
        let pair = try await CompanionPair.running(complicationEnabled: false)
        #expect(!pair.phone.session.isComplicationEnabled && pair.phone.session.remainingComplicationUserInfoTransfers == 0)
        let transfer = pair.phone.pushComplication(minutes: 9)
        #expect(!transfer.isCurrentComplicationInfo)
        try await eventually(10, "the watch stored 9") { pair.watch.store.minutes == 9 }
        await pair.stop()
    }

    /// A watch app in the background is not reachable: the app's guard says so, and a message
    /// sent anyway fails through its errorHandler with `WCError.notReachable`, matched every way
    /// apps match it.
    @Test func aMessageToABackgroundWatchFailsWithNotReachable() async throws {
        let pair = try await CompanionPair.running(watchForeground: false)
        let guarded = Delivered<Result<Int, WCError>>()
        pair.phone.askWatchForProgress(guarded.handler)
        #expect(try await guarded.first("the guarded answer") == .failure(WCError(.notReachable)))
        let errors = Delivered<String>()
        pair.phone.session.sendMessage(["request": "progress"], replyHandler: { _ in errors.handler("reply") }) { error in
            let ns = error as NSError
            var matched: [String] = []
            if (error as? WCError)?.code == .notReachable { matched.append("as") }
            if case WCError.notReachable = error { matched.append("pattern") }
            if ns.domain == WCErrorDomain, ns.code == WCError.Code.notReachable.rawValue { matched.append("nserror") }
            errors.handler(matched.joined(separator: ","))
        }
        #expect(try await errors.first("the errorHandler") == "as,pattern,nserror")
        await pair.stop()
    }

    /// The watch asks the phone live while it is reachable (the phone answers from its sent
    /// context), and queues the request as userInfo once the phone app has gone.
    @Test func theWatchAsksLiveThenFallsBackToUserInfoWhenThePhoneIsGone() async throws {
        let pair = try await CompanionPair.running()
        #expect(pair.phone.publish(minutes: 12, goal: 30) == .sent)
        try await eventually(10, "the watch reachable") { pair.watch.session.isReachable }
        let live = Delivered<String>()
        pair.watch.refreshSummary(live.handler)
        #expect(try await live.first("the live answer") == "replied 12")
        #expect(pair.phone.log.contains("request summary main=false"))
        await pair.phone.session.close()
        try await eventually(10, "the watch hears the phone left") { pair.watch.log.contains { $0.hasPrefix("reachable false") } }
        let fallback = Delivered<String>()
        pair.watch.refreshSummary(fallback.handler)
        #expect(try await fallback.first("the fallback") == "queued")
        #expect(pair.watch.session.outstandingUserInfoTransfers.count == 1)
        await pair.stop()
    }

    /// The watch answers the phone's request later, from another queue; message data echoes.
    @Test func repliesFromAnotherQueueAndMessageDataReachTheirSenders() async throws {
        let pair = try await CompanionPair.running()
        try await eventually(10, "both reachable") { pair.phone.session.isReachable && pair.watch.session.isReachable }
        pair.watch.currentMinutes = 7
        let progress = Delivered<Result<Int, WCError>>()
        pair.phone.askWatchForProgress(progress.handler)
        #expect(try await progress.first("the progress") == .success(7))
        let echo = Delivered<Data?>()
        pair.watch.echo(Data([1, 2, 3]), echo.handler)
        #expect(try await echo.first("the echo") == Data([3, 2, 1]))
        #expect(pair.phone.log.contains("dataRequest 3"))
        await pair.stop()
    }

    /// A recording from the watch arrives as a file the phone's delegate moves into its
    /// documents before returning; the watch's transfer finishes with its progress complete.
    @Test func aRecordingFromTheWatchIsMovedIntoThePhonesDocuments() async throws {
        let pair = try await CompanionPair.running()
        let recording = URL(fileURLWithPath: pair.directory.path("lap-1.m4a"))
        try Data("audio".utf8).write(to: recording)
        let transfer = pair.watch.send(recording: recording)
        #expect(transfer.file.metadata?["name"] as? String == "lap-1.m4a")
        #expect(pair.watch.session.outstandingFileTransfers.contains(transfer))
        try await eventually(10, "the file") { pair.phone.receivedFiles.count == 1 }
        #expect(try Data(contentsOf: pair.phone.receivedFiles[0]) == Data("audio".utf8))
        try await eventually(10, "the watch's didFinish") { pair.watch.log.contains("fileFinished true 5/5") }
        #expect(!transfer.isTransferring)
        await pair.stop()
    }

    /// The watch's laps go to the phone's `didReceiveUserInfo`, its heart rate to the phone's
    /// context; each sender hears `didFinish` for its userInfo.
    @Test func lapsAndHeartRateFromTheWatchReachThePhone() async throws {
        let pair = try await CompanionPair.running()
        pair.watch.send(lap: 1)
        pair.watch.send(lap: 2)
        try pair.watch.publish(heartRate: 120)
        try await eventually(10, "laps and context") {
            pair.phone.log.contains("userInfo 2") && pair.phone.log.contains("context 120")
        }
        #expect(pair.phone.log.filter { $0.hasPrefix("userInfo") } == ["userInfo 1", "userInfo 2"])
        try await eventually(10, "the watch's didFinish") { pair.watch.log.filter { $0.hasPrefix("didFinish") }.count == 2 }
        #expect(pair.watch.log.filter { $0.hasPrefix("didFinish") } == ["didFinish lap 1 0", "didFinish lap 2 0"])
        await pair.stop()
    }
}
