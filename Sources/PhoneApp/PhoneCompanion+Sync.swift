import GitExplorerPayloads
import RelayClient
import RelayProtocol

/// Pushing snapshots: one push at a time, always the latest, never a revision twice.
extension PhoneCompanion {
    /// What a change's snapshot became: `unchanged` without one, else the latest pushed or queued.
    func sync(_ snapshot: FavoritesSnapshot?) async -> SnapshotSync {
        guard snapshot != nil else { return .unchanged }
        return await pushLatest()
    }

    /// Pushes the latest snapshot unless the relay already has it (or a later one).
    ///
    /// Pushes are serialized, so the relay accepts revisions in increasing order; a caller that
    /// waited behind another push sends whatever is latest by then, which includes its own change.
    /// Returns ``SnapshotSync/queued(revision:)`` when the session is not activated and paired,
    /// or the push failed (reported on ``errors``): the next activation pushes it.
    func pushLatest() async -> SnapshotSync {
        await acquirePushTurn()
        defer { releasePushTurn() }
        guard let latest = ledger.latest else { return .unchanged }
        if latest.revision <= sentRevision { return .pushed(revision: sentRevision) }
        let status = await session.status()
        guard !stopped, status.activationState == .activated, status.isPaired else {
            return .queued(revision: latest.revision)
        }
        do {
            try await session.updateApplicationContext(latest.payload)
        } catch {
            report(.relay(Self.relayError(error)))
            return .queued(revision: latest.revision)
        }
        sentRevision = max(sentRevision, latest.revision)
        persistSentRevision()
        record(.snapshotPushed(revision: latest.revision, users: latest.users.count))
        return .pushed(revision: latest.revision)
    }

    /// A new pair (or none) holds no snapshot of ours: the latest must go out again.
    func forgetPushedRevision() {
        sentRevision = 0
        persistSentRevision()
    }

    /// Stores the revision sent when it is the first watch's (no watch id), the only one a
    /// start reads back: a push to another watch must not tell the first one's next start it
    /// already has that revision (it would never get what it missed while the phone was away).
    private func persistSentRevision() {
        guard configuration.watchID == nil else { return }
        do {
            try store.setSentRevision(sentRevision)
        } catch {
            // Only costs a repeated push after a restart, which the watch ignores by revision.
            report(error)
        }
    }

    private func acquirePushTurn() async {
        guard pushing else {
            pushing = true
            return
        }
        await withCheckedContinuation { pushWaiters.append($0) }
    }

    /// Hands the turn to the next waiter (it stays taken), or frees it.
    private func releasePushTurn() {
        if pushWaiters.isEmpty {
            pushing = false
        } else {
            pushWaiters.removeFirst().resume()
        }
    }
}
