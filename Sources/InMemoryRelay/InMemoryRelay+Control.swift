import RelayCore
import RelayProtocol

/// What a scenario does to the in-memory relay from outside: stop and start it (with other
/// limits: ``setLimits(_:)``), read its counters, force a device unreachable, cut a connection,
/// set a pair's complication budget, and let its clock follow the wall (``followRealTime()``).
extension InMemoryRelay {
    /// Stops the relay (false: every connection drops and every connect fails, as with a relay
    /// that is down; what it holds stays, as a relay's durable store does) or starts it again
    /// (devices reconnect at their next back-off deadline).
    public func setRunning(_ up: Bool) {
        running = up
        if !up {
            for (id, device) in devices.sorted(by: { $0.key < $1.key }) {
                if let link = device.link { drop(id, link, code: 1006) }
            }
        }
        drain()
    }

    /// The limits the relay announces in `welcome` and checks sends against.
    public var limits: Limits { relay.configuration.limits }

    /// Sets the limits from now on, as a relay restarted with other settings (`serve
    /// --context-bytes`…) has them, keeping everything it holds. Set them while it is down
    /// (``setRunning(_:)``), and every device is welcomed with them when it connects again; a
    /// device connected now keeps the limits it was welcomed with until then.
    public func setLimits(_ limits: Limits) {
        relay.setLimits(limits)
    }

    /// The relay's counters: open connections, pairs, queued items (as `/metrics` counts them).
    public var stats: (connections: Int, pairs: Int, queued: Int) {
        (relay.connectionCount, relay.pairCount, relay.queuedItemCount)
    }

    /// The counters now, then after every change (every batch of work), until the reader
    /// stops reading (the stream is cancelled or dropped).
    public func statsUpdates() -> AsyncStream<(connections: Int, pairs: Int, queued: Int)> {
        nextSubscriber += 1
        let id = nextSubscriber
        let (stream, sink) = AsyncStream.makeStream(
            of: (connections: Int, pairs: Int, queued: Int).self, bufferingPolicy: .bufferingNewest(1))
        sink.yield(stats)
        sink.onTermination = { _ in Task { await self.unsubscribe(id) } }
        statsSinks[id] = sink
        return stream
    }

    private func unsubscribe(_ id: Int) {
        statsSinks[id] = nil
    }

    /// After a batch of work: the counters to whoever reads ``statsUpdates()``.
    func publishStats() {
        guard !statsSinks.isEmpty else { return }
        let now = stats
        for sink in statsSinks.values { sink.yield(now) }
    }

    /// The relay's ids of the paired device named `deviceName`: the device and its pair.
    public func pairedDevice(named deviceName: String) -> (device: DeviceID, pair: PairID)? {
        for pair in relay.inspect(now: timestamp, maxItems: 0).pairs {
            for device in [pair.phone, pair.watch] where device.name == deviceName { return (device.id, pair.id) }
        }
        return nil
    }

    /// Every pair, oldest first, with its devices' ids, names and whether each is connected.
    public func pairs() -> [(id: PairID, devices: [(id: DeviceID, name: String, connected: Bool)])] {
        relay.inspect(now: timestamp, maxItems: 0).pairs.map { pair in
            (id: pair.id, devices: [pair.phone, pair.watch].map { (id: $0.id, name: $0.name, connected: $0.connected) })
        }
    }

    /// The relay's ids of both devices of `pair`.
    public func devices(of pair: PairID) -> [DeviceID] {
        relay.inspect(now: timestamp, maxItems: 0).pairs.first { $0.id == pair }.map { [$0.phone.id, $0.watch.id] } ?? []
    }

    /// Reports `device` as unreachable while it stays connected (true), or lifts that (the
    /// console's `unreachable` fault).
    public func setForcedUnreachable(_ device: DeviceID, _ forced: Bool) {
        perform(relay.setForcedUnreachable(device, forced, now: timestamp))
        drain()
    }

    /// Lifts every forced unreachability.
    public func clearForcedUnreachable() {
        for device in relay.devicesForcedUnreachable.sorted(by: { $0.rawValue < $1.rawValue }) {
            perform(relay.setForcedUnreachable(device, false, now: timestamp))
        }
        drain()
    }

    /// Closes `device`'s connection (the console's `disconnect` fault): it reconnects at its
    /// back-off deadline.
    public func disconnect(_ device: DeviceID) {
        guard let link = relay.link(of: device), let id = links[link] else { return }
        drop(id, link, code: 1001)
        drain()
    }

    /// Sets the complication transfers `pair` has left (nil: back to the rolling budget).
    public func setComplicationBudgetLeft(_ pair: PairID, _ left: Int?) {
        relay.setComplicationBudgetLeft(pair, left)
    }

    // MARK: - Real time

    /// Lets the relay's clock follow the wall from now until ``stopFollowingRealTime()``: every
    /// input is handled at the wall's time since this call, and one timer is armed for the next
    /// due time (a device's deadline, the relay's reply timeouts), re-armed whenever work ran.
    /// For a scenario whose steps wait in real seconds; a test that wants time to stand still
    /// calls ``advance(by:)`` instead. The timer's task holds the relay until it is stopped.
    public func followRealTime() {
        guard follower == nil else { return }
        wallBase = (ContinuousClock.now, elapsed)
        follower = Task {
            while !Task.isCancelled {
                await self.sleep(atMost: self.untilNextDue())
                self.advance(by: .zero)
            }
        }
    }

    /// Time stands still again (it moves only with ``advance(by:)``); the timer ends.
    public func stopFollowingRealTime() async {
        guard let follower else { return }
        self.follower = nil
        follower.cancel()
        await follower.value
        catchUpWithWall()
        wallBase = nil
    }

    /// While following the wall: time has moved on as far as the wall did (never back).
    func catchUpWithWall() {
        guard let (start, base) = wallBase else { return }
        elapsed = max(elapsed, base + (ContinuousClock.now - start))
    }

    /// How long until the earliest deadline (at least 1 ms: a due one is ticked on the next
    /// turn, never in a loop); nil if none is armed.
    private func untilNextDue() -> Duration? {
        var due = devices.values.compactMap(\.deadline).min().map { $0 - instant }
        if let relayDue = relay.nextDeadline {
            let ms = relayDue.millisecondsSinceEpoch - timestamp.millisecondsSinceEpoch
            due = min(due ?? .milliseconds(ms), .milliseconds(ms))
        }
        return due.map { max($0, .milliseconds(1)) }
    }

    /// Returns after `limit`, or once work ran (its deadlines may have moved), or on cancellation.
    private func sleep(atMost limit: Duration?) async {
        var timer: Task<Void, Never>?
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                wake = c
                if let limit {
                    timer = Task {
                        do { try await Task.sleep(for: limit) } catch { return }  // cancelled: work woke it
                        self.resumeFollower()
                    }
                }
            }
        } onCancel: {
            Task { await self.resumeFollower() }
        }
        timer?.cancel()
    }

    /// Wakes ``followRealTime()`` if it waits.
    func resumeFollower() {
        wake?.resume()
        wake = nil
    }
}
