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

    /// Pushes the latest snapshot unless the relay already has it (or a later one), cut to the
    /// `contextBytes` the relay announced (``SnapshotFit``).
    ///
    /// Pushes are serialized, so the relay accepts revisions in increasing order; a caller that
    /// waited behind another push sends whatever is latest by then, which includes its own change.
    /// Returns ``SnapshotSync/queued(revision:)`` when the session is not activated and paired,
    /// or the push failed (reported on ``errors``): the next activation pushes it;
    /// ``SnapshotSync/partial(revision:omitted:)`` when the relay took only the first favorites
    /// (reported on ``errors`` too). A snapshot pushed partly goes again, as a new revision (the
    /// watch skips a revision it holds), once a relay announcing a larger limit takes more of it.
    func pushLatest() async -> SnapshotSync {
        await acquirePushTurn()
        defer { releasePushTurn() }
        guard var latest = ledger.latest else { return .unchanged }
        let status = await session.status()
        let online = !stopped && status.activationState == .activated && status.isPaired
        var contextBytes = status.limits.contextBytes
        if latest.revision <= sentRevision {
            guard online, sentOmitted > 0, let more = SnapshotFit.fit(latest, contextBytes: contextBytes),
                more.omitted < sentOmitted, let again = reissueLatest()
            else { return sentOmitted > 0 ? .partial(revision: sentRevision, omitted: sentOmitted) : .pushed(revision: sentRevision) }
            latest = again
        }
        guard online else { return .queued(revision: latest.revision) }
        let fitted: SnapshotFit.Fitted
        do {
            fitted = try await sendFitted(latest, contextBytes: contextBytes)
        } catch {
            // The relay came back with a smaller limit while this push was on its way (the
            // session sent it again after the new welcome, and it was refused): fit it to the
            // new limit once, rather than leave the watch on its older list until the next change.
            let now = await session.status().limits.contextBytes
            guard now < contextBytes else { return failedPush(latest, error) }
            contextBytes = now
            do {
                fitted = try await sendFitted(latest, contextBytes: now)
            } catch {
                return failedPush(latest, error)
            }
        }
        sentRevision = max(sentRevision, latest.revision)
        sentOmitted = fitted.omitted
        persistSentRevision()
        record(.snapshotPushed(revision: latest.revision, users: fitted.sent, omitted: fitted.omitted))
        guard fitted.omitted > 0 else {
            pushError = nil
            return .pushed(revision: latest.revision)
        }
        let cut = PhoneError.snapshotTruncated(
            revision: latest.revision, sent: fitted.sent, omitted: fitted.omitted, contextBytes: contextBytes)
        pushError = cut
        report(cut)
        return .partial(revision: latest.revision, omitted: fitted.omitted)
    }

    /// Sends `snapshot` cut to `contextBytes` (``SnapshotFit``); returns what went.
    /// - Throws: ``PhoneError/relay(_:)``: `payloadTooLarge` when not even an empty list fits,
    ///   else what the session said.
    private func sendFitted(_ snapshot: FavoritesSnapshot, contextBytes: Int) async throws(PhoneError) -> SnapshotFit.Fitted {
        guard let fitted = SnapshotFit.fit(snapshot, contextBytes: contextBytes) else {
            throw .relay(.payloadTooLarge(size: snapshot.payload.encodedSize, limit: contextBytes))
        }
        do {
            try await session.updateApplicationContext(fitted.payload)
        } catch {
            throw .relay(Self.relayError(error))
        }
        return fitted
    }

    /// Reports why `snapshot` could not be pushed and keeps it for ``PhoneStatus/pushError``.
    private func failedPush(_ snapshot: FavoritesSnapshot, _ error: PhoneError) -> SnapshotSync {
        pushError = error
        report(error)
        return .queued(revision: snapshot.revision)
    }

    /// The latest snapshot again under a new revision, persisted; nil (reported) if the store failed.
    private func reissueLatest() -> FavoritesSnapshot? {
        var next = ledger
        guard let snapshot = next.reissue() else { return nil }
        do {
            try store.write { try store.saveSnapshot(snapshot) }
        } catch {
            report(error)
            return nil
        }
        ledger = next
        return snapshot
    }

    /// A new pair (or none) holds no snapshot of ours: the latest must go out again.
    func forgetPushedRevision() {
        sentRevision = 0
        sentOmitted = 0
        persistSentRevision()
    }

    /// Stores the revision sent when it is the first watch's (no watch id), the only one a
    /// start reads back: a push to another watch must not tell the first one's next start it
    /// already has that revision (it would never get what it missed while the phone was away).
    private func persistSentRevision() {
        guard configuration.watchID == nil else { return }
        do {
            try store.setSentSnapshot(revision: sentRevision, omitted: sentOmitted)
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
