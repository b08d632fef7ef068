import Foundation
import Primitives
import RelayClient
import RelayProtocol

extension WCSession {
    /// Activates the session: opens the device's store, connects to the relay, then calls
    /// `session(_:activationDidCompleteWith:error:)` on the delegate queue. Activation is
    /// asynchronous, as in WatchConnectivity; set the delegate first.
    ///
    /// Activation completes even when the relay is down (after the relay's request timeout,
    /// 10 s): durable transfers then wait on the device, as they wait for Bluetooth on a phone.
    public func activate() {
        let first = parts.withLock { parts in
            defer { parts.started = true }
            return !parts.started
        }
        guard first else { return }
        let task = Task { await self.run() }
        parts.withLock { $0.tasks.append(task) }
    }

    /// Stops the session: its tasks end and the relay connection closes (WatchRelay addition,
    /// for tests and orderly exits; an app may simply exit). Returns once everything stopped,
    /// a watch switch in progress included.
    public func close() async {
        await parts.withLock({ $0.switching })?.value
        await stopRunning()
    }

    /// Stops the session as ``close()`` does, after telling the relay that this app was
    /// uninstalled (WatchRelay addition, for tests and harnesses): the counterpart's
    /// `isWatchAppInstalled` (or `isCompanionAppInstalled`) turns false, its delegate hears it,
    /// and its sends fail with `watchAppNotInstalled` (or `companionAppNotInstalled`) until a
    /// session on this device's state activates again: the app was installed again
    /// (PROTOCOL.md §7.1).
    ///
    /// On a phone with several watches (PROTOCOL.md §6.5) the iPhone app is uninstalled for all
    /// of them, as on iOS: after the active watch's, the session connects as each of the phone's
    /// other watch identities in turn, just long enough to say it, so every watch sees
    /// `isCompanionAppInstalled` false; the phone's next activation installs it again for the
    /// watch it is of only.
    /// - Returns: whether the relay was told for every watch: false when the session was not
    ///   activated and connected (the counterpart still sees the app installed), or another
    ///   watch's identity could not say it (the relay did not answer within the request
    ///   timeout). The session stops either way.
    @discardableResult
    public func uninstallApp() async -> Bool {
        await parts.withLock({ $0.switching })?.value
        // The identity this session ran as; not activated, the active watch's (which, as on a
        // single-watch phone, is not told).
        let ranAs = parts.withLock { $0.deviceDirectory }
        let told = await stopRunning(uninstalling: true)
        guard let environment, environment.role == .phone else { return told }
        let watches = PhoneWatches(root: environment.stateDirectory)
        let notTold = await PhoneIdentities.uninstallApp(
            root: watches.root, except: ranAs ?? watches.directory(of: watches.activeID),
            configuration: relayConfiguration(environment, directory: watches.root))
        return told && notTold.isEmpty
    }

    /// Ends the tasks and closes the relay connection (saying first, when `uninstalling`, that
    /// the app was uninstalled); `activationState` is `.notActivated` and `isReachable` false after.
    /// Returns whether the relay was told of an uninstall (true when not `uninstalling`).
    @discardableResult
    func stopRunning(uninstalling: Bool = false) async -> Bool {
        let (tasks, relay, streams) = parts.withLock { p in
            (p.tasks, p.relay, [p.messages, p.replies])
        }
        parts.withLock { $0.drainWake?.finish() }
        for stream in streams { stream?.finish() }
        for task in tasks { task.cancel() }
        var told = true
        if uninstalling { told = await relay?.uninstallApp() ?? false } else { await relay?.close() }
        for task in tasks { await task.value }
        // Nothing goes out of a stopped session: the counterpart is not reachable from it
        // (Apple's `isReachable`: "available for live messaging").
        state.withLock { s in
            s.activationState = .notActivated
            s.peerReachable = false
        }
        return told
    }

    // MARK: - Running

    private func run() async {
        guard let environment else {
            Self.sayWhyUnsupported("activate() fails with sessionNotSupported")
            await completeActivation(.notActivated, WCError(.sessionNotSupported))
            return
        }
        let relay: RelaySession
        let outbox: SessionOutbox
        // A phone talks to its active watch, whose state is a directory of its own (§6.5).
        let watches = PhoneWatches(root: environment.stateDirectory)
        // Read once: the follower below compares later choices with the watch this activation
        // is of. Read again there, a choice written meanwhile (switch-watch from another process
        // during the activation) would count as this activation's and never be followed.
        let activeID = watches.activeID
        let directory = environment.role == .phone ? watches.directory(of: activeID) : environment.stateDirectory
        parts.withLock { $0.deviceDirectory = directory }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            outbox = try SessionOutbox(directory: directory)
            relay = try RelaySession(configuration: relayConfiguration(environment, directory: directory))
        } catch {
            await completeActivation(
                .notActivated,
                WCError(.genericError, userInfo: [NSLocalizedDescriptionKey: "Cannot open the device's state: \(error)"]))
            return
        }
        restore(from: outbox)
        restoreFiles(from: outbox)
        do {
            try await relay.activate()
        } catch {
            // Activation completes as on a device (a session activates without its
            // counterpart); say why nothing will arrive yet, once, for the developer.
            // The relay closes an upgrade on another path than its own without a status, so a
            // WATCHRELAY_URL without /v1 looks like a relay that does not answer: say which.
            let path = URLComponents(string: environment.url)?.path ?? ""
            let hint = path.isEmpty || path == "/" ? " (WATCHRELAY_URL has no path: the relay's URL ends in /v1)" : ""
            let message = "WatchConnectivity: no answer from the relay at \(environment.url)\(hint) (\(error)); the session is activated and keeps trying to connect\n"
            StandardError.write(message)
        }
        await refresh(from: relay)
        if !state.withLock({ $0.isPaired }) {
            // As on a device without its counterpart (isPaired false, sends fail with
            // deviceNotPaired); a mistyped WATCHRELAY_STATE looks the same, so say it once.
            let message =
                "WatchConnectivity: the device state in \(directory) is not paired: isPaired is false and sends fail with "
                + "deviceNotPaired until `watchrelay pair --relay \(environment.url) --phone-state … --watch-state …` pairs it\n"
            StandardError.write(message)
        }
        let (messages, messageSink) = AsyncStream.makeStream(of: SessionOperation.self)
        let (replies, replySink) = AsyncStream.makeStream(of: SessionOperation.self)
        let (wake, wakeSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        parts.withLock { p in
            p.relay = relay
            p.outbox = outbox
            p.messages = messageSink
            p.replies = replySink
            p.drainWake = wakeSink
        }
        if !environment.foreground { await relay.setForeground(false) }
        await completeActivation(.activated, nil)
        // Transfers the counterpart received while the app was killed before hearing it: their
        // `didFinish` comes now, at this launch, as on a device.
        // Unpaired meanwhile, or paired again (a new pair, which holds none of the old one's
        // transfers), the relay dropped what it held: those transfers fail
        // (``failLostWithPair``), none is taken for received.
        let samePair = await notePair(relay, outbox: outbox)
        let held = samePair ? Set(await relay.outstandingUserInfoTransfers.map(\.id)) : nil
        if held == nil { await failTransfersLostWithPair(outbox: outbox) }
        for (item, code) in (try? outbox.finishedTransfers(heldByRelaySession: held)) ?? [] {
            await itemFinished(item, outbox: outbox, error: code.map { WCError(WCError.Code(rawValue: $0) ?? .genericError) })
        }
        await finishFilesAtLaunch(outbox: outbox, heldByRelaySession: held)
        if environment.role == .phone { await noticeWatchChange(directory) }
        var workers = [
            Task { await self.sendOperations(messages) },
            Task { await self.sendOperations(replies) },
            Task { await self.drainOutbox(relay: relay, outbox: outbox, wake: wake) },
        ]
        if environment.role == .phone {
            workers.append(Task { await self.followActiveWatch(from: activeID, in: watches) })
        }
        parts.withLock { $0.tasks.append(contentsOf: workers) }
        wakeSink.yield()
        await receive(from: relay, outbox: outbox)
    }

    /// The relay session's configuration for the device state in `directory`.
    private func relayConfiguration(_ environment: WCSessionEnvironment, directory: String) -> RelaySessionConfiguration {
        RelaySessionConfiguration(
            url: environment.url, role: environment.role, deviceName: environment.deviceName,
            stateDirectory: directory, foreground: environment.foreground,
            requestTimeoutSeconds: environment.requestTimeoutSeconds)
    }

    private func completeActivation(_ activationState: WCSessionActivationState, _ error: WCError?) async {
        state.withLock { $0.activationState = activationState }
        await withDelegate { session, delegate in
            delegate.session(session, activationDidCompleteWith: activationState, error: error)
        }
        state.withLock { $0.activationReported = true }
    }

    /// Whether the delegate's `activationDidCompleteWith` has returned (or there was no
    /// delegate to call) since the session was made: WatchRelayTesting's `activate` waits for it.
    package var activationReported: Bool { state.withLock { $0.activationReported } }

    /// Outstanding transfers and the sent context from the device's store (after a restart).
    private func restore(from outbox: SessionOutbox) {
        let items = (try? outbox.outstandingUserInfo()) ?? []
        let sent = try? outbox.sentContext()
        let transfers = items.map {
            WCSessionUserInfoTransfer(
                id: $0.id, payload: $0.payload, sentAsComplication: $0.channel == .complication, session: self)
        }
        state.withLock { s in
            for t in transfers { s.addTransfer(t) }
            s.currentComplicationID = items.last { $0.channel == .complication }?.id
            // Spent before the app stopped, not yet counted by the relay.
            s.unacceptedComplications = Set(items.filter { $0.channel == .complication && $0.relayID == nil }.map(\.id))
            s.applicationContext = sent
        }
    }

    /// Pairing, reachability, limits and the received context as the relay session sees them.
    /// Returns whether `isReachable` changed: after activation the caller tells the delegate
    /// (the relay's own `reachabilityChanged` event, handled after this, then finds no change).
    @discardableResult
    func refresh(from relay: RelaySession) async -> Bool {
        let paired = await relay.isPaired
        let reachable = await relay.isReachable
        let installed = await relay.isPeerAppInstalled
        let limits = await relay.limits
        let remaining = await relay.remainingComplicationUserInfoTransfers
        let received = await relay.receivedApplicationContext
        return state.withLock { s in
            let before = s.isReachable
            s.isPaired = paired
            s.peerReachable = reachable
            s.peerAppInstalled = installed
            s.limits = limits
            s.relayRemainingComplications = remaining
            if let received { s.receivedApplicationContext = received }
            return s.isReachable != before
        }
    }

    /// Asks the sending tasks to do `operation`.
    ///
    /// A message that finds them stopped (the session closed, or began switching watches,
    /// after its send was checked) fails at once: it was dropped, and its errorHandler never ran.
    func enqueue(_ operation: SessionOperation) {
        let sink = parts.withLock { p in
            if case .reply = operation { return p.replies }
            return p.messages
        }
        if let sink, case .enqueued = sink.yield(operation) { return }
        if case .message(_, _, let onError?) = operation {
            let error = Self.notActivated(state.withLock { $0.activationState })
            delegateQueue.async { onError(error) }
        }
    }

    /// Tells the outbox drainer there is work.
    func wakeDrainer() {
        _ = parts.withLock { $0.drainWake?.yield() }
    }

    static func newID() -> String { UUID().uuidString.lowercased() }
}
