import RelayProtocol

extension RelayState {
    /// The paired session on `link`, or `not_paired`.
    mutating func pairedSession(_ link: LinkID, re: String?) throws(ProtocolError) -> (Session, PairID) {
        let (session, pairID, _) = try pairedSessionAt(link, re: re)
        return (session, pairID)
    }

    /// ``pairedSession(_:re:)`` and where the pair lies in `pairs` (``DenseTable/position(of:)``:
    /// valid while no pair is added or removed, as in the handling of a `send`).
    mutating func pairedSessionAt(_ link: LinkID, re: String?) throws(ProtocolError) -> (Session, PairID, position: Int) {
        guard let (session, hint) = links.read(link, { ($0.session, $0.pairHint) }), let s = session,
            let pairID = s.pairID, let position = pairs.position(of: pairID, hint: hint)
        else {
            throw ProtocolError(.notPaired, "this device is not paired", re: re)
        }
        if position != hint { _ = links.update(link) { $0.pairHint = position } }
        return (s, pairID, position)
    }

    /// Whether `pairID` is a pair. Not `pairs[pairID] != nil`: the getter copies the whole
    /// ``PairState`` out (every array and set in it retained, then released).
    func hasPair(_ pairID: PairID) -> Bool {
        pairs.contains(pairID)
    }

    /// `body` on the state of `pairID` where the table stores it; nil (and `body` not run) when
    /// there is no such pair. `body` cannot touch `self` (`pairs` is being modified): callers
    /// read what it needs first.
    @inline(__always)
    mutating func updatePair<T>(_ pairID: PairID, _ body: (inout PairState) -> T) -> T? {
        pairs.update(pairID, body)
    }

    // MARK: - send

    mutating func send(_ f: Send, on link: LinkID) throws(ProtocolError) {
        let (session, pairID, position) = try pairedSessionAt(link, re: f.id)
        let sender = session.role
        if f.mode == .complication, sender != .phone {
            throw ProtocolError(.notSupported, "complication transfers go from the phone to the watch only", re: f.id)
        }
        try configuration.limits.check(f)
        // A send this device already had accepted (a retry) is not queued or delivered again.
        if pairs.update(at: position, { $0.alreadyAccepted(f.id, from: sender) }) {
            let q = pairs[pairID]![sender]
            var again = Accepted(re: f.id)
            if f.mode == .complication {
                again.remaining = complicationsLeft(pairID)
                // Demoted: held as a userInfo, sent or not. A held item that is neither sent (at
                // most a delivery window) nor an unsent complication (at most a day's budget) is
                // in `unsent`, found without walking it (a retry costs no walk of 10,000 items).
                let sentMode = q.sent.first { sameID($0.sendID, f.id) }?.mode
                let unsent =
                    sentMode == nil && q.holds(f.id) && !q.unsentComplications.contains { sameID($0.sendID, f.id) }
                if unsent || sentMode == .userInfo {
                    again.fallback = .userInfo
                }
            }
            // The first attempt's insert may still be on its way to the store, and on a new
            // connection nothing else holds this answer back (PROTOCOL.md §8.1).
            actions.append(.awaitStore)
            emit(.accepted(again), to: link)
            return
        }
        // §7.1: nothing new for an app that is not installed. A retry (above) is answered as
        // before: its item was accepted, is kept, and goes when the app runs again.
        if !pairs.update(at: position, { sender == .phone ? $0.record.watch.appInstalled : $0.record.phone.appInstalled }) {
            throw sender == .phone
                ? ProtocolError(.watchAppNotInstalled, "the watch app is not installed", re: f.id)
                : ProtocolError(.companionAppNotInstalled, "the companion (phone) app is not installed", re: f.id)
        }
        if f.mode == .message {
            return try sendMessage(f, from: link, sender: sender, pairID: pairID, at: position)
        }
        var item = QueuedItem(sendID: f.id, mode: f.mode, payload: f.payload, acceptedAt: now)
        try checkQuotas(for: item, pairID, sender: sender, re: f.id)
        var accepted = Accepted(re: f.id)
        let window = payloadWindow
        let online = connectedLink(of: sender.peer, in: pairID) != nil
        switch f.mode {
        case .context:
            replaceContext(pairID, sender: sender)
            updatePair(pairID) { $0[sender].enqueue(item, window: window, receiverOnline: online) }
        case .complication:
            let left = complicationsLeft(pairID)
            if left > 0 {
                let now = now
                updatePair(pairID) {
                    $0[sender].enqueue(item, window: window, receiverOnline: online)
                    $0.complicationUses.append(now)
                }
                persist(.addComplicationUse(pairID, now))
                if complicationBudgetLeft[pairID] != nil { complicationBudgetLeft[pairID] = left - 1 }
                accepted.remaining = left - 1
            } else {
                item.mode = .userInfo
                updatePair(pairID) { $0[sender].enqueue(item, window: window, receiverOnline: online) }
                accepted.remaining = 0
                accepted.fallback = .userInfo
            }
        default:
            updatePair(pairID) { $0[sender].enqueue(item, window: window, receiverOnline: online) }
        }
        queuedBytesTotal += item.size
        persist(.insertItem(pairID, direction: sender, item))
        emit(.accepted(accepted), to: link)
        pump(pairID, sender: sender)
    }

    /// Latest wins: an older context still queued leaves (and leaves `outstanding`).
    private mutating func replaceContext(_ pairID: PairID, sender: Role) {
        guard var q = takeQueue(pairID, sender) else { return }
        defer { putQueue(q, pairID, sender) }
        var replaced: [String] = []
        if let old = q.unsent.first(where: { $0.mode == .context }), let gone = q.removeUnsent(old.sendID) {
            replaced.append(gone.sendID)
            queuedBytesTotal -= gone.size
        }
        for item in q.sent where item.mode == .context {
            if let gone = q.removeSent(item.sendID) {
                replaced.append(gone.sendID)
                queuedBytesTotal -= gone.size
            }
        }
        guard !replaced.isEmpty else { return }
        q.remember(finished: replaced, keep: configuration.finishedIDsKept)
        persist(.deleteItems(pairID, direction: sender, sendIDs: replaced))
        persist(.recordFinished(pairID, direction: sender, sendIDs: replaced))
    }

    /// A `message` from `link` (`position`: where its pair lies in `pairs`; a message adds and
    /// removes no pair).
    private mutating func sendMessage(
        _ f: Send, from link: LinkID, sender: Role, pairID: PairID, at position: Int
    ) throws(ProtocolError) {
        guard let receiver = reachableLink(of: sender.peer, inPairAt: position) else {
            throw ProtocolError(.notReachable, "the \(sender.peer) is not reachable", re: f.id)
        }
        let wantsReply = f.wantsReply == true
        // Only a request is keyed (the plain message's path builds nothing more).
        let key = wantsReply ? ReplyKey(pair: pairID, requesterRole: sender, sendID: ExactID(f.id)) : nil
        if let key { try checkReplyQuotas(key, re: f.id) }
        let seq = nextSeq(pairID, at: position, sender: sender)
        pairs.update(at: position) { $0[sender].remember(message: f.id) }
        emit(.accepted(Accepted(re: f.id)), to: link)
        emit(
            .deliver(
                Deliver(
                    seq: seq, mode: .message, id: f.id, from: sender, sentAt: now, payload: f.payload,
                    wantsReply: wantsReply ? true : nil)), to: receiver)
        if let key {
            let deadline = now.adding(milliseconds: Int64(configuration.limits.replyTimeoutMs))
            replies.insert(key, PendingReply(requester: link, replier: receiver, deadline: deadline))
        }
    }

    /// The connection of `role`'s device in the pair at `position` in `pairs` when it is
    /// connected and reachable: what ``connectedLink(of:in:)`` and then ``presence(ofLink:)``
    /// say, with each table read once (they looked the device's link up twice and copied its
    /// `Link` out twice). Mutating only to read the pair's record and the link where they lie
    /// (`DenseTable`'s subscript copies the whole value out).
    mutating func reachableLink(of role: Role, inPairAt position: Int) -> LinkID? {
        let device = pairs.update(at: position) { $0.record.device(role).id }
        guard let link = deviceLinks[device],
            links.read(link, { $0.phase == .ready && $0.session?.awake == true }) == true,
            !isForcedUnreachable(device)
        else { return nil }
        return link
    }

    func presence(ofLink link: LinkID) -> Presence {
        guard let device = links[link]?.session?.deviceID else { return Presence(connected: false, reachable: false) }
        return presence(of: device)
    }

    /// The next seq of `sender`'s direction, reserving a new block in the store when needed.
    mutating func nextSeq(_ pairID: PairID, sender: Role) -> Int64 {
        guard let position = pairs.position(of: pairID) else { return 0 }
        return nextSeq(pairID, at: position, sender: sender)
    }

    /// ``nextSeq(_:sender:)`` of the pair at `position` in `pairs`.
    mutating func nextSeq(_ pairID: PairID, at position: Int, sender: Role) -> Int64 {
        let (block, now) = (configuration.seqReservationBlock, now)
        let step = pairs.update(at: position) { $0[sender].advanceSeq(block: block, now: now) }
        record(step, pairID, sender)
        return step.seq
    }

    /// Turns a seq step into store actions: the wait for its reservation first (a reservation
    /// ahead in the same step need not be waited for).
    mutating func record(_ step: SeqStep, _ pairID: PairID, _ sender: Role) {
        if step.awaits { actions.append(.awaitSeqReservation(pairID, direction: sender)) }
        switch step.reservation {
        case .now(let upTo): persist(.setSeqReserved(pairID, direction: sender, upTo))
        case .ahead(let upTo): actions.append(.persistAhead(.setSeqReserved(pairID, direction: sender, upTo)))
        case nil: break
        }
    }

    /// The store committed `sender`'s seq reservation of `pairID` up to `upTo` (a
    /// `.setSeqReserved` the core asked for): seqs up to it no longer wait for anything.
    public mutating func seqReservationCommitted(_ pairID: PairID, direction sender: Role, upTo: Int64) {
        _ = updatePair(pairID) { $0[sender].seqReservationCommitted(upTo: upTo) }
    }

    /// Every seq reservation among `actions` is committed: for a driver whose store commits
    /// at once, or that has none (InMemoryRelay, bench-core, the core's tests).
    public mutating func seqReservationsCommitted(in actions: [RelayAction]) {
        for action in actions {
            switch action {
            case .persist(.setSeqReserved(let pairID, let sender, let upTo)),
                .persistAhead(.setSeqReserved(let pairID, let sender, let upTo)):
                seqReservationCommitted(pairID, direction: sender, upTo: upTo)
            default: break
            }
        }
    }

    /// Moves `sender`'s queue of `pairID` out of `pairs` (leaving an empty one) so changing it
    /// copies none of its arrays; ``putQueue(_:_:_:)`` puts it back. Nothing may read that
    /// queue in between (persisting and emitting may: they do not read queues).
    mutating func takeQueue(_ pairID: PairID, _ sender: Role) -> DirectionQueue? {
        updatePair(pairID) { pair in
            var q = DirectionQueue()
            swap(&q, &pair[sender])
            return q
        }
    }

    /// Puts back a queue taken with ``takeQueue(_:_:)``.
    mutating func putQueue(_ q: consuming DirectionQueue, _ pairID: PairID, _ sender: Role) {
        updatePair(pairID) { $0[sender] = q }
    }

    /// Sends queued durable items to the receiver of `sender`'s direction, within the window.
    mutating func pump(_ pairID: PairID, sender: Role) {
        guard let receiver = connectedLink(of: sender.peer, in: pairID), var q = takeQueue(pairID, sender) else { return }
        defer { putQueue(q, pairID, sender) }
        let window = payloadWindow
        defer {
            // Read ahead once the hot payloads fall to half of the window.
            if let window, let ids = q.payloadsToLoad(window, needed: false) {
                actions.append(.loadPayloads(pairID, direction: sender, sendIDs: ids))
            }
        }
        while q.inFlight < configuration.inFlightItems, q.inFlight == 0 || q.inFlightBytes < configuration.inFlightBytes {
            var item: QueuedItem
            if q.inFlight < q.sent.count {
                item = q.sent[q.inFlight]
            } else if let window, q.nextUnsentIsCold {
                // FIFO: nothing goes out before the next item's payload is back from the store.
                if let ids = q.payloadsToLoad(window, needed: true) {
                    actions.append(.loadPayloads(pairID, direction: sender, sendIDs: ids))
                }
                return
            } else if let next = q.popUnsent() {
                item = next
                let step = q.advanceSeq(block: configuration.seqReservationBlock, now: now)
                record(step, pairID, sender)
                item.seq = step.seq
                q.sent.append(item)
                persist(.setItemSeq(pairID, direction: sender, sendID: item.sendID, seq: step.seq))
                if item.mode == .context {
                    q.lastSentContext = item.deliver(from: sender)
                    persist(.setLastSentContext(pairID, direction: sender, item.deliver(from: sender)))
                }
            } else {
                return
            }
            q.inFlight += 1
            q.inFlightBytes += item.size
            emit(.deliver(item.deliver(from: sender)), to: receiver)
        }
    }

    /// The payload window of a direction, or nil when every payload stays in memory.
    var payloadWindow: PayloadWindow? {
        configuration.loadsPayloadsOnDemand
            ? PayloadWindow(items: configuration.hotPayloadItems, bytes: configuration.hotPayloadBytes) : nil
    }

    /// Payloads the store read back: into their items, then delivery goes on. With the receiver
    /// gone meanwhile they are dropped (it reads them again when it is back).
    mutating func payloadsLoaded(_ pairID: PairID, sender: Role, _ payloads: [ExactID: Payload]) {
        guard hasPair(pairID) else { return }
        guard connectedLink(of: sender.peer, in: pairID) != nil else {
            updatePair(pairID) { $0[sender].loadPending = false }
            return
        }
        updatePair(pairID) { $0[sender].fill(payloads) }
        pump(pairID, sender: sender)
    }

    // MARK: - ack

    mutating func ack(_ f: Ack, on link: LinkID) throws(ProtocolError) {
        let (session, pairID) = try pairedSession(link, re: f.id)
        applyAck(pairID, sender: session.role.peer, through: f.seq)
    }

    /// Everything of `sender`'s direction with seq ≤ `seq` was processed by the receiver.
    mutating func applyAck(_ pairID: PairID, sender: Role, through seq: Int64) {
        guard var q = takeQueue(pairID, sender) else { return }
        let done = q.ack(through: seq)
        guard !done.isEmpty else {
            putQueue(q, pairID, sender)
            return
        }
        let ids = done.map(\.sendID)
        queuedBytesTotal -= done.reduce(0) { $0 + $1.size }
        q.remember(finished: ids, keep: configuration.finishedIDsKept)
        // WC's didFinish userInfoTransfer: for userInfo and complication, not for context.
        let transferred = done.filter { $0.mode != .context }.map(\.sendID)
        let senderLink = transferred.isEmpty ? nil : connectedLink(of: sender, in: pairID)
        if !transferred.isEmpty && senderLink == nil { q.pendingTransferred += transferred }
        putQueue(q, pairID, sender)
        // The window has room again: the next items go out before the ack is recorded, so they
        // do not wait for its commit (frames after a `.persist` do). They were stored when they
        // were accepted; if the relay dies before the ack is committed, the receiver's next
        // `hello` acks the same items again with its `lastSeq` (PROTOCOL.md §5.1), so nothing it
        // processed comes back. `transferred` stays behind the commit: a response means done.
        pump(pairID, sender: sender)
        persist(.deleteItems(pairID, direction: sender, sendIDs: ids))
        persist(.recordFinished(pairID, direction: sender, sendIDs: ids))
        if let senderLink {
            emit(.transferred(Transferred(ids: transferred)), to: senderLink)
        } else if !transferred.isEmpty {
            persist(.appendPendingTransferred(pairID, direction: sender, ids: transferred))
        }
    }

    // MARK: - cancel and outstanding

    mutating func cancel(_ f: Cancel, on link: LinkID) throws(ProtocolError) {
        let (session, pairID) = try pairedSession(link, re: f.id)
        let sender = session.role
        guard var q = takeQueue(pairID, sender) else { return }
        defer { putQueue(q, pairID, sender) }
        let target = f.target
        let key = ExactID(target)
        // Only a held item is looked for among the items (the unsent ones may be 10,000 long,
        // and ids chosen to share a long prefix made each look cost as much): a `cancel` of
        // anything else is answered from the sets. `sent` is at most a delivery window.
        let held = q.holds(target)
        let sentMode = held ? q.sent.first { sameID($0.sendID, target) }?.mode : nil
        let unsentMode =
            held && sentMode == nil
            ? (q.unsentComplications.first { sameID($0.sendID, target) } ?? q.unsent.first { sameID($0.sendID, target) })?.mode
            : nil
        if unsentMode == .context || sentMode == .context || q.recentMessages.contains(target)
            || q.contexts.contains(key) || q.lastSentContext.map({ sameID($0.id, target) }) == true
        {
            throw ProtocolError(.notSupported, "only userInfo and complication transfers can be cancelled", re: f.id)
        }
        if q.cancelled.contains(key) {
            actions.append(.awaitStore)  // the first cancel's deletion may not be committed yet
            emit(.cancelled(Answer(re: f.id)), to: link)
            return
        }
        if unsentMode != nil, let gone = q.removeUnsent(target) {
            queuedBytesTotal -= gone.size
            q.remember(finished: [target], keep: configuration.finishedIDsKept)
            q.cancelled.insert(key)
            persist(.deleteItems(pairID, direction: sender, sendIDs: [target]))
            persist(.recordCancelled(pairID, direction: sender, sendID: target))
            emit(.cancelled(Answer(re: f.id)), to: link)
            return
        }
        if sentMode != nil || q.finishedSet.contains(key) {
            throw ProtocolError(.alreadyDelivered, "'\(target)' was already delivered", re: f.id)
        }
        throw ProtocolError(.unknownID, "no send '\(target)' from this device", re: f.id)
    }

    mutating func outstanding(_ f: Request, on link: LinkID) throws(ProtocolError) {
        let (session, pairID) = try pairedSession(link, re: f.id)
        let ids = pairs[pairID]?[session.role].outstanding.map(\.sendID) ?? []
        // What the list says (held, or gone) is what the store will hold once what is asked of
        // it is committed: the answer waits for that (an id listed, then lost to a kill -9).
        actions.append(.awaitStore)
        emit(.outstanding(OutstandingList(re: f.id, ids: ids)), to: link)
    }

    // MARK: - reply

    mutating func reply(_ f: ClientReply, on link: LinkID) throws(ProtocolError) {
        let (session, pairID) = try pairedSession(link, re: f.id)
        try configuration.limits.check(.reply(f))
        let key = ReplyKey(pair: pairID, requesterRole: session.role.peer, sendID: ExactID(f.re))
        guard let pending = replies[key], pending.replier == link else {
            if recentTimeouts.contains(key) {
                // Late, not wrong: the receiver answered as the relay's timeout passed (its own
                // clock started at the deliver). Refused, but not counted (§4.2): a receiver
                // slow to answer a burst would otherwise be closed, losing what it had in flight.
                emit(.error(ProtocolError(.unknownID, "message '\(f.re)' already timed out", re: f.id).frame), to: link)
                return
            }
            throw ProtocolError(.unknownID, "no message '\(f.re)' is waiting for a reply", re: f.id)
        }
        replies.remove(key)
        // A requester gone offline: the reply is dropped.
        if let requester = pending.requester, links[requester]?.phase == .ready {
            emit(.reply(RelayReply(re: f.re, payload: f.payload)), to: requester)
        }
    }

    mutating func expireReplies() {
        // Runs before every event: a look at the oldest timeout and the heap's top while
        // nothing is due. Late replies come within a moment of their timeout; two timeouts'
        // time is ample, and lets a burst's ids go soon after.
        recentTimeouts.prune(before: now.adding(milliseconds: -2 * Int64(configuration.limits.replyTimeoutMs)))
        guard let next = replies.nextDeadline, next <= now else { return }
        // In the order the requests were sent (as before: ties by id, not by the heap's order).
        let due = replies.removeDue(at: now).sorted { a, b in
            a.pending.deadline != b.pending.deadline
                ? a.pending.deadline < b.pending.deadline
                : a.key.sendID.text.utf8.lexicographicallyPrecedes(b.key.sendID.text.utf8)
        }
        for (key, pending) in due {
            recentTimeouts.insert(key, at: now, limit: configuration.maxPendingRepliesTotal)
            if let requester = pending.requester, links[requester]?.phase == .ready {
                emit(
                    .error(ProtocolError(.replyTimeout, "no reply within the reply timeout", re: key.sendID.text).frame),
                    to: requester)
            }
        }
    }

}
