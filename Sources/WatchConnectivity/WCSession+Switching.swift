import Foundation
import Primitives
import RelayClient

extension WCSession {
    /// Phone: the user switches to another paired watch (WatchRelay addition: on an iPhone the
    /// user does this in the Watch app; here the app, a test, or `watchrelay switch-watch` from
    /// another process, which an activated phone session follows at once: an inotify event).
    ///
    /// Follows Apple's order for an activated session:
    /// 1. `activationState` becomes `.inactive` and the delegate gets `sessionDidBecomeInactive(_:)`.
    ///    From then on new transfers fail with ``WCError/Code/sessionInactive`` (7016):
    ///    `updateApplicationContext` throws it, `sendMessage`'s `errorHandler` and `transferUserInfo`'s
    ///    `didFinish` get it, and messages not yet sent are cancelled with it.
    /// 2. Data already queued is still delivered: transfers the app queued before the switch
    ///    are handed to the relay for the old watch (what the relay can't take within the
    ///    request timeout stays queued for the old watch, on this device), and what the old
    ///    watch sent keeps reaching the delegate.
    /// 3. The connection to the old watch closes, `activationState` becomes `.notActivated`,
    ///    the delegate gets `sessionDidDeactivate(_:)`.
    /// 4. The app calls ``activate()`` again and gets the new watch:
    ///    `activationDidComplete`, then `sessionWatchStateDidChange(_:)`.
    ///
    /// Everything queued for the old watch stays its own (PROTOCOL.md §6.5): the relay delivers
    /// it to the old watch, and its `didFinish` reaches the app when that watch is active again.
    /// Outstanding transfers, `isPaired`, `isWatchAppInstalled` and `watchDirectoryURL` are the
    /// active watch's. Returns after `sessionDidDeactivate` returned (or at once, when the
    /// session was not activated: the next ``activate()`` uses the new watch).
    ///
    /// - Parameter id: a watch paired with `watchrelay pair --watch-id ID` (or
    ///   ``PhoneWatches/defaultID``, the watch paired without one).
    /// - Throws: ``WCError/Code/sessionNotSupported`` on a watch, ``WCError/Code/invalidParameter``
    ///   for a malformed id, ``WCError/Code/deviceNotPaired`` for a watch this phone has no state
    ///   for (these three change nothing), ``WCError/Code/genericError`` when the choice can't be
    ///   written down (after `sessionDidDeactivate`: the session is deactivated all the same).
    public func switchWatch(to id: String) async throws {
        guard let environment, environment.role == .phone else { throw WCError(.sessionNotSupported) }
        guard PhoneWatches.isValid(id) else {
            throw WCError(.invalidParameter, userInfo: [NSLocalizedDescriptionKey: "'\(id)' is not a watch id."])
        }
        let watches = PhoneWatches(root: environment.stateDirectory)
        guard watches.ids.contains(id) else {
            throw WCError(.deviceNotPaired, userInfo: [NSLocalizedDescriptionKey: "No watch '\(id)' is paired with this phone."])
        }
        let wasActivated = state.withLock { s in
            guard s.activationState == .activated else { return false }
            s.activationState = .inactive
            return true
        }
        if wasActivated {
            await withDelegate { session, delegate in delegate.sessionDidBecomeInactive(session) }
            await deliverPending(timeout: environment.requestTimeoutSeconds)
            await stopRunning()
            state.withLock { $0.forgetWatch() }
            parts.withLock { p in p = RunningParts(lastWatchDirectory: p.lastWatchDirectory, switching: p.switching) }
        }
        var notWritten: (any Error)?
        do {
            try watches.setActive(id)
        } catch {
            notWritten = error
        }
        // Deactivated either way: the app is told, and its next `activate()` gets the watch
        // `active-watch` names (the old one when it could not be written).
        if wasActivated {
            await withDelegate { session, delegate in delegate.sessionDidDeactivate(session) }
        }
        if let notWritten {
            throw WCError(.genericError, userInfo: [NSLocalizedDescriptionKey: "Cannot choose watch '\(id)': \(notWritten)"])
        }
    }

    /// The active watch's id (phone; WatchRelay addition): ``PhoneWatches/defaultID`` unless
    /// another was chosen. `nil` on a watch.
    public var activeWatchID: String? {
        guard let environment, environment.role == .phone else { return nil }
        return PhoneWatches(root: environment.stateDirectory).activeID
    }

    /// While inactive: waits until every transfer queued on the device went to the relay and
    /// every received item reached the delegate, or `timeout` seconds passed. Awaited: checked
    /// again each time the drainer or a delivery made progress, and once at the deadline.
    private func deliverPending(timeout: Double) async {
        let outbox = parts.withLock { $0.outbox }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        let timer = Task {
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            self.noteProgress()
        }
        defer { timer.cancel() }
        wakeDrainer()
        while ContinuousClock.now < deadline {
            let seen = state.withLock { $0.progress }
            let unsent = (try? outbox?.next()) != nil
            let receiving = state.withLock { $0.contentPending > 0 }
            if !unsent && !receiving { return }
            await progress(after: seen)
        }
    }

    /// Returns once ``noteProgress()`` ran after the moment `seen` was read.
    private func progress(after seen: UInt64) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let already = state.withLock { s -> Bool in
                guard s.progress == seen else { return true }
                s.progressWaiters.append(c)
                return false
            }
            if already { c.resume() }
        }
    }

    /// The drainer or a delivery moved on: whoever waits in ``deliverPending(timeout:)`` checks again.
    func noteProgress() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.progress &+= 1
            defer { s.progressWaiters = [] }
            return s.progressWaiters
        }
        for w in waiters { w.resume() }
    }

    /// Phone: follows the active watch chosen by another process (`watchrelay switch-watch`
    /// writes `active-watch`), as iOS tells a running app the user switched watches: looks at
    /// once, then again on each change of that file (an inotify event on the phone's state
    /// directory), or every 250 ms only where inotify is unavailable or its watch ended. When
    /// another paired watch than `active` (the one this activation is of) became active,
    /// switches to it as ``switchWatch(to:)`` does. The switch runs in a task of its own (its
    /// `close()` ends this one), kept in the session's parts.
    func followActiveWatch(from active: String, in watches: PhoneWatches) async {
        let looks = FileWakes(directory: watches.root, name: PhoneWatches.activeFileName, fallback: .milliseconds(250))
        defer { looks.stop() }
        for await _ in looks.wakes {
            let chosen = watches.activeID
            guard !Task.isCancelled, chosen != active, watches.ids.contains(chosen) else { continue }
            // `chosen` has state (checked above) and is written down already, so the switch
            // has nothing left to fail on.
            let switching = Task { _ = try? await self.switchWatch(to: chosen) }
            parts.withLock { $0.switching = switching }
            return
        }
    }

    /// Tells the delegate the watch state changed if this activation is of another watch than
    /// the last one.
    func noticeWatchChange(_ directory: String) async {
        let changed = parts.withLock { p in
            defer { p.lastWatchDirectory = directory }
            return p.lastWatchDirectory != nil && p.lastWatchDirectory != directory
        }
        guard changed else { return }
        await withDelegate { session, delegate in delegate.sessionWatchStateDidChange(session) }
    }
}
