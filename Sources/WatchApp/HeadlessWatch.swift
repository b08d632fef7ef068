import Foundation
import GitExplorerPayloads
import Primitives
import RelayClient
import RelayProtocol
import SQLite

/// The live headless watch: a ``RelaySession`` with the phone, the watch's own store, and
/// ``WatchAppState`` driven by a clock.
///
/// Snapshots are stored first, then the widgets are asked to reload — the fix for
/// GitExplorer's "widget did not refresh" bug — then acked (never before the save). One timer
/// runs the widget scheduler at its next wake-up date (on the injected clock, so a manual
/// clock drives it in tests); nothing polls.
///
/// Snapshot → widget reload crosses three times: the lws service thread hands the frame to
/// the session (its connection's event stream), the session hands the delivery to this actor
/// (``SessionClient/events``), and this actor hands the reload to whoever reads ``events``.
/// Storing, the widget state and the reload itself run here in one turn, without a hop.
public actor HeadlessWatch {
    /// What the watch does and sees, in order. Iterate it from one task.
    public nonisolated let events: AsyncStream<WatchEvent>
    /// The session with the relay (WCSession for the watch app).
    public nonisolated let session: SessionClient
    public nonisolated let clock: Clock
    /// The clock the relay stamps `sentAt` with, when it is not ``clock``: a relay process
    /// stamps its wall clock, and a watch on a manual clock (`watch --manual-clock`) places
    /// those stamps on its own clock before measuring a latency from them. Nil: the same clock
    /// (the system clock, or an in-memory relay's on the watch's manual clock).
    private let relayClock: Clock?

    private let sink: AsyncStream<WatchEvent>.Continuation
    private let store: WatchStore
    private var state: WatchAppState
    /// The pair the stored snapshot came from: a snapshot from another pair (a new phone,
    /// whose revisions start again) is taken whatever its revision.
    private var snapshotPair: String?
    private var tasks: [Task<Void, Never>] = []
    /// The resend of unaccepted deletes started by the latest activation (each waits for the one before).
    private var resending: Task<Void, Never>?
    /// The one widget timer and the wake-up date it is armed for.
    private var widgetTimer: Task<Void, Never>?
    private var armedWake: Timestamp?
    /// `paired` session events handled so far, and who waits for the next one.
    private var pairedEvents = 0
    private var pairedWaiters: [(after: Int, CheckedContinuation<Void, Never>)] = []
    /// Who waits until the watch handled the newest context the relay holds for it.
    private var caughtUpWaiters: [CheckedContinuation<Void, Never>] = []
    /// Deletes sent whose `accepted` has not come back yet.
    private var deletesInFlight: Set<String> = []
    /// Deletes a snapshot completed while their `accepted` was still on its way (this actor
    /// handles the phone's snapshot and the relay's answer in whichever order they arrive).
    private var deletesCompletedEarly: Set<String> = []
    private var handledDeliveries = 0
    /// How many events went to ``events`` so far.
    public private(set) var publishedEvents = 0
    /// With `publishesFaces`: the newest widget faces (SVG) for the relay's console wait here
    /// for the one task that sends them (latest wins); the last one handed over.
    private let facesSink: AsyncStream<String>.Continuation?
    private let facesQueue: AsyncStream<String>?
    private var lastFaces: String?
    /// The shortest time between two `faces` frames.
    public static let facesInterval: Duration = .milliseconds(250)

    /// The watch's own store in its state directory (`watch.db`), beside the session's.
    public static let storeFileName = WatchStore.fileName

    /// Where the watch's relay session keeps its `session.db`: the state directory itself, as
    /// the phone's and a WatchConnectivity app's, so `watchrelay pair --watch-state DIR` pairs
    /// `watchrelay watch --state DIR`. A directory whose session a watch made before that, in
    /// `DIR/session`, keeps it there (moving a live SQLite file with its WAL could lose it).
    public static func sessionDirectory(of stateDirectory: String) -> String {
        let legacy = stateDirectory + "/session"
        let fm = FileManager.default
        if !fm.fileExists(atPath: stateDirectory + "/session.db") && fm.fileExists(atPath: legacy + "/session.db") {
            return legacy
        }
        return stateDirectory
    }

    /// Opens the watch's state directory; call ``start()`` to connect.
    ///
    /// `session` is the session to use (e.g. an in-memory one); nil: a live ``RelaySession``
    /// to `relayURL`, keeping its state in ``sessionDirectory(of:)``. With `publishesFaces`
    /// (`watch --console`), the widget faces go to the relay's console as SVG after every
    /// event that may have changed them (`faces` frames, PROTOCOL.md §10.1). `reconnectBackoff`:
    /// the live session's seconds between reconnect attempts (nil: the session's default).
    /// `relayClock`: the clock the relay stamps `sentAt` with, when it is not `clock`.
    public init(
        relayURL: String, stateDirectory: String, deviceName: String = "Apple Watch", foreground: Bool = true,
        rules: WidgetRules = WidgetRules(), clock: Clock = .system, relayClock: Clock? = nil, session: SessionClient? = nil,
        publishesFaces: Bool = false, reconnectBackoff: [Double]? = nil
    ) throws {
        try DirectoryError.create(stateDirectory, option: "--state")
        var configuration = RelaySessionConfiguration(
            url: relayURL, role: .watch, deviceName: deviceName, stateDirectory: Self.sessionDirectory(of: stateDirectory),
            foreground: foreground)
        if let reconnectBackoff { configuration.backoff = reconnectBackoff }
        // The session first: a directory that holds a phone's session is refused before a
        // watch.db is put in it.
        self.session = try session ?? .live(RelaySession(configuration: configuration))
        store = try WatchStore(directory: stateDirectory)
        self.clock = clock
        self.relayClock = relayClock
        var state = WatchAppState.standard(rules: rules, now: clock.now())
        state.setForeground(foreground, now: clock.now())
        if let (snapshot, sentAt) = try store.snapshot() {
            state.receive(snapshot, sentAt: Self.placed(sentAt, on: clock, relayClock: relayClock), now: clock.now())
        }
        for (login, _) in try store.pendingDeletes() { _ = state.delete(login) }
        snapshotPair = try store.snapshotPair()
        if try store.setting("noBudget") == "1" { state.setNoBudget(true) }
        if let selected = try store.setting("selected") {
            try? state.configure("stack.rectangular", selecting: selected, now: clock.now())
        }
        self.state = state
        (events, sink) = AsyncStream.makeStream(of: WatchEvent.self)
        if publishesFaces {
            let (queue, facesSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
            (self.facesQueue, self.facesSink) = (queue, facesSink)
        } else {
            (self.facesQueue, self.facesSink) = (nil, nil)
        }
    }

    /// Connects to the relay and starts the event and widget loops; returns once activated.
    public func start() async throws {
        guard tasks.isEmpty else { return }
        let session = session
        tasks.append(Task { for await event in session.events { await self.handle(event) } })
        if let facesQueue {
            // At most one `faces` frame per interval: what changed meanwhile waits, latest wins.
            tasks.append(
                Task {
                    for await svg in facesQueue {
                        await session.publishFaces(svg)
                        try? await Task.sleep(for: Self.facesInterval)
                    }
                })
        }
        rearmWidgetTimer()
        await showReceivedContext()
        try await session.activate()
        // Deletes the relay never accepted (the app died first) go again; the activated event
        // does the same on every later connection.
        await resendUnacceptedDeletes()
    }

    /// Stops the loops and closes the session.
    public func stop() async {
        let close = session.close
        await stop(closing: { await close(); return true })
    }

    /// `uninstall`: the watch app is uninstalled. The relay is told (`state`
    /// `{appInstalled: false}`, PROTOCOL.md §7.1: the phone sees `isWatchAppInstalled` false and
    /// its pushes fail with `watch_app_not_installed`), the watch stops as ``stop()`` does, and
    /// its own store (`watch.db`: the favorites, pending deletes and settings) is emptied, as
    /// watchOS deletes an uninstalled app's container. The session's state (the pairing, which
    /// is the device's) stays: a watch started again on the same state directory is the app
    /// installed again, it starts empty and shows the last list the phone sent (the session's
    /// `receivedApplicationContext`), then whatever the phone sends.
    /// - Returns: whether the relay was told: false when the session was not activated (the
    ///   relay away), and the phone still sees the app installed. The store is emptied either way.
    /// - Throws: the store's error if it could not be emptied (the relay was told all the same).
    @discardableResult
    public func uninstall() async throws -> Bool {
        let told = await stop(closing: session.uninstallApp)
        try store.erase()
        return told
    }

    /// Stops the loops, closes the session with `closing`, and lets every waiter go; returns
    /// what `closing` did.
    @discardableResult
    private func stop(closing: @Sendable () async -> Bool) async -> Bool {
        for t in tasks { t.cancel() }
        resending?.cancel()
        facesSink?.finish()
        widgetTimer?.cancel()
        widgetTimer = nil
        let closed = await closing()
        for t in tasks { await t.value }
        await resending?.value
        resending = nil
        tasks = []
        releaseWaiters()
        sink.finish()
        return closed
    }

    // MARK: - Commands

    /// Joins the phone showing `code`; returns once paired and the `paired` event is published.
    public func pair(code: String) async throws {
        let before = pairedEvents
        try await session.pair(code)
        if pairedEvents > before { return }
        await withCheckedContinuation { pairedWaiters.append((before, $0)) }
    }

    /// Returns once the watch has handled (stored and acked) everything the relay held for
    /// it: what "the widget shows the phone's latest" means. Call after ``start()``.
    /// - Throws: the session's error if the relay could not be asked.
    public func caughtUp() async throws {
        try await session.synchronize()
        while true {
            let seen = handledDeliveries
            if await isCaughtUp() { return }
            // Something handled while this looked: look again, else wait for the next one.
            if handledDeliveries == seen { break }
        }
        await withCheckedContinuation { caughtUpWaiters.append($0) }
    }

    /// ``caughtUp()`` if the session is activated and paired (true once it returned); false at
    /// once otherwise, or if the relay could not be asked: then nothing can arrive on its own.
    public func caughtUpIfConnected() async -> Bool {
        let status = await session.status()
        guard status.activationState == .activated, status.isPaired else { return false }
        do {
            try await caughtUp()
            return true
        } catch {
            return false
        }
    }

    private func isCaughtUp() async -> Bool {
        guard tasks.isEmpty == false else { return true }
        return await session.status().handledEverythingReceived
    }

    /// `delete <login>`: marks the user pending and sends `favorites.delete` by userInfo;
    /// returns once the relay accepted it (the phone may be offline). A login already pending
    /// is not sent again.
    ///
    /// - Throws: ``WatchAppError/notAFavorite(_:favorites:)`` for a login the watch does not
    ///   list; the session's or the store's error.
    public func delete(_ login: String) async throws {
        guard state.favorites.contains(login) else {
            throw WatchAppError.notAFavorite(login, favorites: state.favorites.users.map(\.login))
        }
        guard let command = state.delete(login) else { return }
        do {
            try store.setPendingDelete(command.login, accepted: false)
        } catch {
            // Not written down, not sent: left marked, a second delete returned without sending.
            state.undoDelete(command.login)
            throw error
        }
        try await sendDelete(command.login)
    }

    /// A watch starting without a stored list (installed again after ``uninstall()``) shows
    /// the last one the phone sent, which the session kept (`receivedApplicationContext`, as an
    /// app reads at launch): the phone sends it no new one unless its list changed.
    private func showReceivedContext() async {
        guard state.favorites.snapshot == nil else { return }
        let status = await session.status()
        guard let context = status.receivedApplicationContext, context.kind == FavoritesSnapshot.kind.rawValue,
            let snapshot = try? FavoritesSnapshot(json: context.json)
        else { return }
        let pair = status.pairID
        do {
            try store.save(snapshot, sentAt: clock.now(), pair: pair)
        } catch {
            publish(.error(.storeFailed("could not store the favorites snapshot: \(error)")))
            return
        }
        snapshotPair = pair
        guard state.receive(snapshot, sentAt: clock.now(), now: clock.now(), fromNewPair: true) else { return }
        publish(.snapshotStored(revision: snapshot.revision, logins: snapshot.users.map(\.login), omitted: snapshot.omitted))
        rearmWidgetTimer()
    }

    /// Sends again, one at a time, every pending delete the relay has not accepted and nothing
    /// is sending now. The store is read again before each: another resend running beside this
    /// one (the start's, and the activation event's) may have had it accepted meanwhile.
    private func resendUnacceptedDeletes() async {
        var tried: Set<String> = []
        while let login = ((try? store.pendingDeletes()) ?? []).first(where: { login, accepted in
            !accepted && !deletesInFlight.contains(login) && !tried.contains(login)
        })?.0 {
            tried.insert(login)
            try? await sendDelete(login)
        }
    }

    private func sendDelete(_ login: String) async throws {
        deletesInFlight.insert(login)
        defer { deletesInFlight.remove(login) }
        do {
            _ = try await session.transferUserInfo(LoginCommand.favoritesDelete(login).payload)
        } catch {
            deletesCompletedEarly.remove(login)
            if case RelaySessionError.relay(.companionAppNotInstalled, _) = error { companionAppMissed(login) }
            throw error
        }
        // Already completed (and announced) by a snapshot: nothing is pending any more.
        if deletesCompletedEarly.remove(login) != nil { return }
        try store.setPendingDelete(login, accepted: true)
        publish(.deleteAccepted(login: login))
    }

    /// A delete the relay refused because the iPhone app is not installed: it failed, as
    /// WatchConnectivity fails such a transfer (`companionAppNotInstalled`, 7018). The favorite
    /// is no longer pending (it shows again, and can be deleted again once the app runs) and an
    /// error says why.
    private func companionAppMissed(_ login: String) {
        do {
            try store.removePendingDelete(login)
        } catch {
            // Still written down, so it goes again at the next start: pending here too, and said.
            publish(.error(.storeFailed("delete \(login) was refused (companion_app_not_installed) and stays pending: \(error)")))
            return
        }
        state.undoDelete(login)
        publish(
            .error(
                WatchFailure(
                    source: "relay", code: ErrorCode.companionAppNotInstalled.rawValue,
                    message: "delete \(login) failed: the iPhone app is not installed (companion_app_not_installed); delete it again once it runs")))
    }

    /// `open <login>`: asks the phone for the repos (message with reply); returns the screen
    /// once it is loaded, failed or offline.
    @discardableResult
    public func open(_ login: String) async -> ProfileDetail? {
        guard case .sendRequest(let command)? = state.openProfile(login) else { return state.profile }
        publish(.profile(state.profile!))
        let event: ProfileDetail.Event
        do {
            let reply = try await session.sendMessage(command.payload, true)
            // The reply answers this request: one naming another user is as unexpected as one of
            // another kind (the screen would ignore it and stay loading). One the watch cannot
            // read came all the same: the phone is reachable, and the screen says what was wrong.
            let asked = login.lowercased()
            let payload: AppPayload?
            do {
                payload = try reply.flatMap { try AppPayload($0) }
            } catch {
                payload = nil
                publish(.error(.invalidPayload("not a valid reply to open \(login): \(error)")))
            }
            switch payload {
            case .repos(let repos)? where repos.login.lowercased() == asked: event = .replied(repos)
            case .reposError(let error)? where error.login.lowercased() == asked: event = .failed(error)
            default: event = .failed(ReposError(login: login, code: .githubUnavailable, message: "unexpected reply"))
            }
        } catch RelaySessionError.replyTimeout, RelaySessionError.timeout {
            event = .timeout
        } catch {
            event = .unreachable
        }
        state.handleProfile(event)
        if let screen = state.profile { publish(.profile(screen)) }
        return state.profile
    }

    /// `select <login>` (nil: rotate): the rectangular widget's configuration intent.
    public func select(_ login: String?) throws {
        try state.configure("stack.rectangular", selecting: login, now: clock.now())
        rearmWidgetTimer()
        try store.setSetting("selected", login)
    }

    /// `foreground` / `background`: reachability for the phone, and free widget reloads.
    public func setForeground(_ foreground: Bool) async {
        state.setForeground(foreground, now: clock.now())
        rearmWidgetTimer()
        await session.setForeground(foreground)
    }

    /// The `--no-budget` debug switch.
    public func setNoBudget(_ on: Bool) throws {
        state.setNoBudget(on)
        rearmWidgetTimer()
        try store.setSetting("noBudget", on ? "1" : nil)
    }

    /// Asks for a reload by hand.
    public func requestReload() {
        state.requestReload(now: clock.now())
        rearmWidgetTimer()
    }

    /// Runs the widget system's due work now; returns (and publishes) its events.
    @discardableResult
    public func flush() -> [WidgetEvent] {
        let pass = state.flush(now: clock.now())
        for e in pass.events { publish(.widget(e)) }
        rearmWidgetTimer()
        return pass.events
    }

    /// Runs the widget work due within `horizon` from now, at its due time on the watch's
    /// clock (e.g. a reload waiting out its debounce); returns when none is left that soon.
    public func settle(within horizon: Duration) async {
        let limit = horizon.components.seconds * 1000 + horizon.components.attoseconds / 1_000_000_000_000_000
        for _ in 0..<16 {
            let now = clock.now()
            guard let wake = state.nextWakeUp(now: now), wake.millisecondsSinceEpoch - now.millisecondsSinceEpoch <= limit
            else { return }
            if wake > now, await !clock.sleep(wake) { return }
            flush()
        }
    }

    /// The whole watch state (widgets, favorites, profile) as it is now.
    public var current: WatchAppState { state }

    /// Puts `event` on ``events`` and counts it (``publishedEvents``): a consumer that counts
    /// what it read knows when it has seen everything published before a given moment.
    private func publish(_ event: WatchEvent) {
        publishedEvents += 1
        sink.yield(event)
        if facesSink != nil { publishFaces() }
    }

    /// Hands the faces to the publisher task if they differ from the last ones (a session
    /// not activated or not paired drops them; the next event sends them again).
    private func publishFaces() {
        let svg = SVGRenderer.render(state.widgets, now: clock.now())
        guard svg != lastFaces else { return }
        lastFaces = svg
        facesSink?.yield(svg)
    }

    // MARK: - Loops

    private func handle(_ event: SessionEvent) async {
        switch event {
        case .applicationContext(let d), .userInfo(let d):
            // A snapshot may come by `complication` (a userInfo delivery, or plain userInfo once
            // the budget is spent) as well as by context: handled the same way (PROTOCOL §12.2).
            await receive(d)
            await releaseCaughtUpWaiters()
        case .message:
            break
        case .reachabilityChanged(let r):
            publish(.reachability(r))
        case .peerAppInstalledChanged(let installed):
            publish(.companionAppInstalled(installed))
        case .paired(_, let peer):
            lastFaces = nil  // sent before pairing, they were dropped: send them again
            publish(.paired(peer: peer))
            pairedEvents += 1
            let ready = pairedWaiters.filter { $0.after < pairedEvents }
            pairedWaiters.removeAll { $0.after < pairedEvents }
            for (_, waiter) in ready { waiter.resume() }
        case .activated(let paired):
            lastFaces = nil  // a new connection (the relay may have restarted): send them again
            publish(.activated(paired: paired))
            // A delete that failed while the relay was unreachable is still pending here: it goes
            // now, as a queued transferUserInfo would (not from this loop: it waits for `accepted`).
            let previous = resending
            resending = Task {
                await previous?.value
                await self.resendUnacceptedDeletes()
            }
        case .unpaired(let reason):
            publish(.error(WatchFailure(source: "relay", code: "unpaired", message: "unpaired: \(reason)")))
        case .disconnected:
            publish(.disconnected)
        case .error(let error):
            publish(.error(.relay(error, "session")))
        case .userInfoTransferFinished:
            break
        }
    }

    /// The relay's `sentAt` stamp as an instant of ``clock``.
    private nonisolated func placed(_ sentAt: Timestamp) -> Timestamp {
        Self.placed(sentAt, on: clock, relayClock: relayClock)
    }

    private static func placed(_ sentAt: Timestamp, on clock: Clock, relayClock: Clock?) -> Timestamp {
        relayClock.map { clock.placing(sentAt, readOn: $0) } ?? sentAt
    }

    /// Stores the snapshot, then requests the widget reload, then acks it (PROTOCOL §12.2's
    /// order); whatever else came is acknowledged.
    ///
    /// A snapshot that cannot be stored is handed back to the session (`release`): it comes
    /// again, and the acks of what follows can pass it. One that is not a valid snapshot never
    /// will be: it is reported and acknowledged (kept, it held every later ack back). One whose
    /// revision is not above the one shown is acknowledged and not stored: the store holds what
    /// the screen shows, so a restart never brings back an older list. Revisions count within a
    /// pair: the first snapshot from a pair other than the stored one's (the watch paired with a
    /// new phone, whose revisions start again at 1) is taken whatever its revision.
    private func receive(_ d: Delivery) async {
        guard d.payload.kind == FavoritesSnapshot.kind.rawValue else {
            await session.acknowledge(d)
            return
        }
        let snapshot: FavoritesSnapshot
        do {
            snapshot = try FavoritesSnapshot(json: d.payload.json)
        } catch {
            publish(.error(.invalidPayload("not a valid favorites snapshot: \(error)")))
            await session.acknowledge(d)
            return
        }
        let pair = await session.status().pairID ?? snapshotPair
        let fromNewPair = pair != snapshotPair
        guard fromNewPair || state.favorites.isNewer(snapshot) else {
            await session.acknowledge(d)
            return
        }
        do {
            let pendingBefore = state.favorites.pendingDeletes
            try store.save(snapshot, sentAt: d.sentAt, pair: pair)
            snapshotPair = pair
            if state.receive(snapshot, sentAt: placed(d.sentAt), now: clock.now(), fromNewPair: fromNewPair) {
                publish(.snapshotStored(revision: snapshot.revision, logins: snapshot.users.map(\.login), omitted: snapshot.omitted))
                for login in pendingBefore where !state.favorites.pendingDeletes.contains(login) {
                    // Accepted comes before completed, also when the phone's snapshot overtook
                    // the relay's `accepted` on its way to this actor (the user is gone either way).
                    if deletesInFlight.contains(login) {
                        deletesCompletedEarly.insert(login)
                        publish(.deleteAccepted(login: login))
                    }
                    publish(.deleteCompleted(login: login))
                }
                // Without a debounce the reload is due now: run it here, not on the timer.
                if let wake = state.nextWakeUp(now: clock.now()), wake <= clock.now() { flush() } else { rearmWidgetTimer() }
            }
            // Stored, so the ack may go; after the reload, which need not wait for its hop to
            // the session and back.
            await session.acknowledge(d)
        } catch {
            publish(.error(.storeFailed("could not store the favorites snapshot: \(error)")))
            await session.release?(d)
        }
    }

    private func releaseCaughtUpWaiters() async {
        handledDeliveries += 1
        guard !caughtUpWaiters.isEmpty, await isCaughtUp() else { return }
        let waiters = caughtUpWaiters
        caughtUpWaiters = []
        for w in waiters { w.resume() }
    }

    /// Lets everyone waiting go (the watch stopped).
    private func releaseWaiters() {
        for (_, w) in pairedWaiters { w.resume() }
        pairedWaiters = []
        for w in caughtUpWaiters { w.resume() }
        caughtUpWaiters = []
    }

    /// Arms the one widget timer for the scheduler's next wake-up date (if it moved).
    private func rearmWidgetTimer() {
        guard !tasks.isEmpty else { return }
        let wake = state.nextWakeUp(now: clock.now())
        guard wake != armedWake else { return }
        armedWake = wake
        widgetTimer?.cancel()
        guard let wake else {
            widgetTimer = nil
            return
        }
        let clock = clock
        widgetTimer = Task {
            guard await clock.sleep(wake) else { return }
            self.widgetTimerFired()
        }
    }

    private func widgetTimerFired() {
        armedWake = nil
        if let wake = state.nextWakeUp(now: clock.now()), wake <= clock.now() {
            flush()
        } else {
            rearmWidgetTimer()
        }
    }
}
