import RelayProtocol

extension RelayState {
    // MARK: - Connection quotas

    /// A new connection: admitted, or refused with `quota_exceeded` and close 1008 when the
    /// relay or its address already has as many connections as its quota allows (§9).
    mutating func opened(_ link: LinkID, address: String) {
        let fromAddress = addressConnections[address, default: 0]
        let total = links.count
        links[link] = Link(id: link, address: address)
        addressConnections[address] = fromAddress + 1
        let refusal: String?
        if total >= configuration.maxConnections {
            refusal = "the relay has \(total) connections, its quota; try again later"
        } else if fromAddress >= configuration.maxConnectionsPerAddress {
            refusal = "this address has \(fromAddress) connections to the relay, its quota; close one first"
        } else {
            refusal = nil
        }
        guard let refusal else {
            helloDeadlines.append(HelloDeadline(link: link, at: now.adding(milliseconds: configuration.helloTimeoutMs)))
            return
        }
        close(link, after: ProtocolError(.quotaExceeded, refusal), reason: "connection quota")
    }

    // MARK: - Pending replies

    /// Throws `quota_exceeded` if one more `message` with `wantsReply` (`key`) would take its
    /// pair, or the relay, over its quota of requests waiting for a reply. Each is held in
    /// memory until its reply, its timeout or its receiver leaving: a sender flooding a watch
    /// that never replies made the relay hold its rate × `replyTimeoutMs` of them (PROTOCOL.md
    /// §8.2). An id already pending counts once (a retry of a recent id is answered before this,
    /// §8.1; one older than the remembered ids replaces its pending request).
    func checkReplyQuotas(_ key: ReplyKey, re: String) throws(ProtocolError) {
        guard replies[key] == nil else { return }
        let ofPair = replies.count(of: key.pair)
        if ofPair >= configuration.maxPendingRepliesPerPair {
            throw ProtocolError(
                .quotaExceeded,
                "this pair has \(ofPair) messages waiting for a reply, its quota; retry once the"
                    + " \(key.requesterRole.peer) has replied to some or they timed out", re: re)
        }
        if replies.count >= configuration.maxPendingRepliesTotal {
            throw ProtocolError(
                .quotaExceeded, "the relay has \(replies.count) messages waiting for a reply, its quota; retry later", re: re)
        }
    }

    // MARK: - Queue quotas

    /// Throws `quota_exceeded` if queuing `item` in `sender`'s direction of `pairID` would take
    /// that direction over its item or byte quota, or the relay over its total byte quota.
    ///
    /// Counts what the queue would hold after the send: a context replaces the contexts it
    /// holds (latest wins), so those do not count. Nothing is stored when this throws.
    ///
    /// `mutating` only to read the queue in place (``updatePair(_:_:)``); it changes nothing.
    mutating func checkQuotas(for item: QueuedItem, _ pairID: PairID, sender: Role, re: String) throws(ProtocolError) {
        let isContext = item.mode == .context
        guard
            let (replaced, queuedCount, queuedBytes) = updatePair(pairID, { pair in
                (isContext ? pair[sender].replaceableContexts : [], pair[sender].queuedCount, pair[sender].queuedBytes)
            })
        else { return }
        let freed = replaced.reduce(0) { $0 + $1.size }
        let items = queuedCount - replaced.count + 1
        let bytes = queuedBytes - freed + item.size
        let total = queuedBytesTotal - freed + item.size
        // Only an error names it: built on every send, it was ~1 % of a durable send's time.
        var direction: String { "the \(sender) → \(sender.peer) queue" }
        if items > configuration.maxQueuedItemsPerDirection {
            throw ProtocolError(
                .quotaExceeded,
                "\(direction) holds \(queuedCount) items, its quota of \(configuration.maxQueuedItemsPerDirection);"
                    + " retry once the \(sender.peer) has acked some", re: re)
        }
        if bytes > configuration.maxQueuedBytesPerDirection {
            throw ProtocolError(
                .quotaExceeded,
                "\(direction) would hold \(bytes) payload bytes, over its quota of"
                    + " \(configuration.maxQueuedBytesPerDirection); retry once the \(sender.peer) has acked some", re: re)
        }
        if total > configuration.maxQueuedBytesTotal {
            throw ProtocolError(
                .quotaExceeded,
                "the relay would hold \(total) queued payload bytes, over its quota of"
                    + " \(configuration.maxQueuedBytesTotal); retry later", re: re)
        }
    }
}
