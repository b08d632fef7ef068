import RelayClient
import RelayCore
import RelayProtocol

extension InMemoryRelay {
    /// Runs queued work until none is left: synchronous, in order, on this actor.
    func drain() {
        catchUpWithWall()
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case .device(let id, let input): handleDevice(id, input)
            case .relay(let event): perform(relay.handle(event, now: timestamp))
            }
        }
        resumeFollower()
        publishStats()
    }

    /// Feeds a device's core; a write's answer goes back in before anything else (as the
    /// live driver does).
    private func handleDevice(_ id: Int, _ input: SessionInput) {
        var inputs = [input]
        while !inputs.isEmpty {
            guard var device = devices[id] else { return }
            let actions = device.core.handle(inputs.removeFirst(), now: instant)
            devices[id] = device
            for action in actions {
                if let answer = execute(action, for: id) { inputs.append(answer) }
            }
        }
    }

    private func execute(_ action: SessionAction, for id: Int) -> SessionInput? {
        guard let device = devices[id] else { return nil }
        switch action {
        case .connect:
            guard device.online, running else {
                queue.append(.device(id, .connectFailed()))
                return nil
            }
            nextLink += 1
            let link = LinkID(nextLink)
            links[link] = id
            devices[id]?.link = link
            queue.append(.relay(.opened(link, address: "memory")))
            queue.append(.device(id, .connected))
        case .disconnect(let code, _):
            if let link = device.link { drop(id, link, code: code) }
        case .send(let frame):
            if let link = device.link { queue.append(.relay(.frame(link, FrameCodec.encode(frame)))) }
        case .persist(let write):
            if failingWrites.contains(device.name) {
                return .persistFailed(id: write.id, reason: "injected write failure")
            }
            var stored = stores[device.store] ?? SessionSnapshot()
            for record in write.records { stored.apply(record) }
            stores[device.store] = stored
            return .persisted(id: write.id)
        case .emit(let event):
            device.sink.yield(event)
        case .complete(let ticket, let result):
            if let waiter = devices[id]?.waiters.removeValue(forKey: ticket) {
                waiter.resume(with: result.mapError { $0 as any Error })
            } else {
                devices[id]?.finished[ticket] = result
            }
        case .armDeadline(let at):
            devices[id]?.deadline = at
        }
        return nil
    }

    /// Carries out the relay core's actions.
    func perform(_ actions: [RelayAction]) {
        // The relay's state is this actor's memory: a seq reservation is as good as committed.
        relay.seqReservationsCommitted(in: actions)
        for action in actions {
            switch action {
            case .send(let link, let frame):
                if let id = links[link] { queue.append(.device(id, .frame(frame))) }
            case .close(let link, let code, _):
                if let id = links[link] { drop(id, link, code: code.rawValue) }
            case .persist, .persistAhead, .awaitSeqReservation, .awaitStore, .loadPayloads:
                break  // nothing to commit or read
            }
        }
    }

    /// The connection `link` of device `id` is gone, for both ends.
    func drop(_ id: Int, _ link: LinkID, code: UInt16) {
        links[link] = nil
        devices[id]?.link = nil
        queue.append(.relay(.closed(link)))
        queue.append(.device(id, .closed(code: code)))
    }
}

extension SessionSnapshot {
    /// The snapshot after a write of `record`.
    mutating func apply(_ record: SessionRecord) {
        switch record {
        case .token(let v): token = v
        case .pairID(let v): pairID = v
        case .peerName(let v): peerName = v
        case .lastSeq(let n): lastSeq = n
        case .receivedContext(let p): receivedContext = p
        case .sentContext(let p): sentContext = p
        case .transfers(let t): transfers = t
        }
    }
}

extension InMemoryRelay {
    /// How many messages wait for a reply at the relay (a test knows when to move time).
    public func pendingReplyCount() -> Int { relay.pendingReplyCount }
}
