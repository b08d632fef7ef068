import RelayConsole
import RelayCore
import RelayProtocol
import WebSocketTransport

/// What the engine keeps for the console (`serve --console`): the hub it reports to, the
/// frames held by `delay`/`slow-writes` faults, and what it last applied of the plan.
struct ConsoleAttachment: Sendable {
    /// A frame (with its type, counted as sent when it goes) or a close waiting behind a fault.
    enum Outgoing: Sendable {
        case frame([UInt8], FrameType)
        case close(UInt16, String)
    }

    let hub: ConsoleHub
    var gate = DeliveryGate<Outgoing>()
    /// The most bytes the gate may hold for one connection: the transport's outbound cap
    /// (`maxQueuedBytesPerConnection`), past which it too closes a slow consumer.
    let maxHeldBytes: Int
    /// Paired devices as of the last inspection (reachability faults are checked for these).
    var devices: [(device: DeviceID, pair: PairID)] = []
    /// The budget faults last applied to the core, with when each was set (setting the same
    /// `left` again starts the budget over).
    var budgets: [PairID: FaultPlan.ComplicationBudget] = [:]
    /// Set by every event the engine handles (the relay's state may have changed).
    var changed = true
    /// The plan version last applied to the core (-1: never).
    var appliedPlanVersion = -1
    /// When a `flap` fault turns over next.
    var nextFlip: Timestamp?

    init(hub: ConsoleHub, maxHeldBytes: Int) {
        self.hub = hub
        self.maxHeldBytes = maxHeldBytes
    }
}

/// The engine's console hooks: frames logged, faults applied. Each hook runs only with a
/// console; without one the engine's paths are as before.
extension RelayEngine {
    /// Logs an incoming frame; swallows a `reply` a `no-reply` fault asks for, if the core would
    /// take it (a bad one, such as an unknown `re`, goes on to be refused and leaves the fault
    /// for the next). Returns whether the frame was swallowed (the core never sees it: the
    /// requester times out).
    func consoleInbound(_ link: LinkID, _ bytes: [UInt8]) -> Bool {
        guard let console else { return false }
        let now = clock.now()
        let member = core.member(of: link)
        var swallowed = false
        let type = FrameLog.type(of: bytes)
        if let m = member, m.role == .watch, type == "faces",
            case .faces(let faces)? = try? FrameCodec.decodeClientFrame(bytes)
        {
            // Shown on the console, and that is all (the core would accept it with no effect;
            // a bad one goes on to the core, which answers the error).
            console.hub.publishFaces(of: m.device, svg: faces.svg, at: now)
            console.hub.logFrame(bytes, direction: "in", link: link, member: member, at: now)
            return true
        }
        // While a `no-reply` waits on this device every frame of it is decoded: the core reads
        // an escaped name (`"\u0074ype"`) or value as it reads a plain one, and so does the fault.
        if let m = member, console.hub.withPlan({ $0.holdsReply(from: m.device, in: m.pair) }),
            case .reply(let reply)? = try? FrameCodec.decodeClientFrame(bytes), core.awaitsReply(reply, on: link)
        {
            swallowed = console.hub.withPlan { plan in
                guard plan.swallowsReply(from: m.device, in: m.pair) else { return false }
                plan.count(.noReply)
                return true
            }
        }
        if swallowed { log.info("fault fired", ("kind", "no-reply"), ("device", member?.device.rawValue ?? "")) }
        console.hub.logFrame(bytes, direction: "in", link: link, member: member, at: now, fault: swallowed ? "swallowed" : "")
        return swallowed
    }

    /// Sends a frame through the faults: a `drop` may drop a message delivery, `delay` and
    /// `slow-writes` hold it (and everything after it on that connection). A connection that
    /// holds more than the transport would queue is closed as a slow consumer (1008): what it
    /// held goes, and its durable items are delivered again when it is back. Returns whether
    /// the frame went now (not dropped, not held).
    func consoleSend(_ bytes: [UInt8], _ frame: RelayFrame, to link: LinkID, _ outbound: inout OutboundBatch) -> Bool {
        guard let hub = console?.hub else { return false }
        let now = clock.now()
        let member = core.member(of: link)
        var delay = 0
        var spacing = 0
        if let m = member {
            let (drop, d, s) = hub.withPlan { plan in
                var drop = false
                if case .deliver(let deliver) = frame, deliver.mode == .message, plan.dropsMessage(to: m.device, in: m.pair) {
                    plan.count(.drop)
                    drop = true
                }
                return (drop, plan.deliveryDelay(to: m.device, in: m.pair), plan.writeSpacing(to: m.device, in: m.pair))
            }
            if drop {
                log.info("fault fired", ("kind", "drop"), ("device", m.device.rawValue), ("frame", "deliver"))
                hub.logFrame(bytes, direction: "out", link: link, member: member, at: now, fault: "dropped")
                return false
            }
            delay = d
            spacing = s
        }
        let goes = console?.gate.submit(
            .frame(bytes, frame.type), bytes: bytes.count, to: link, delay: delay, spacing: spacing, now: now.millisecondsSinceEpoch)
        if goes != nil {
            outbound.send(bytes, to: ConnectionID(rawValue: link.rawValue))
        } else {
            hub.withPlan { $0.count(delay > 0 ? .delay : .slowWrites) }
            // No copy of `console` bound: it would make `forget` copy the whole gate.
            if let most = console?.maxHeldBytes, console?.gate.heldBytes(to: link) ?? 0 > most {
                console?.gate.forget(link)
                outbound.close(
                    ConnectionID(rawValue: link.rawValue), code: CloseCode.policy.rawValue,
                    reason: WebSocketServer.slowConsumerReason)
            }
        }
        hub.logFrame(bytes, direction: "out", link: link, member: member, at: now, fault: goes == nil ? "held" : "")
        return goes != nil
    }

    /// Closes a connection behind whatever a fault still holds for it.
    func consoleClose(_ link: LinkID, code: UInt16, reason: String, _ outbound: inout OutboundBatch) {
        guard console != nil else { return }
        let now = clock.now().millisecondsSinceEpoch
        if console?.gate.submit(.close(code, reason), to: link, delay: 0, spacing: 0, now: now) != nil {
            outbound.close(ConnectionID(rawValue: link.rawValue), code: code, reason: reason)
        }
    }

    /// A connection is gone: what was held for it goes too (durable items stay stored).
    func consoleClosed(_ link: LinkID) {
        console?.gate.forget(link)
    }

    /// This engine no longer leads its cluster (it will not run again): frames held by faults
    /// are dropped (their connections are closed with 1001 and resume on the next leader). The
    /// hub empties what it shows itself (``ConsoleHub/setNode(_:leads:at:)``).
    func consoleStepDown() {
        console?.gate = DeliveryGate()
    }

    /// At the end of each service-loop turn: the relay's state to the console (coalesced: at
    /// most one inspection and push per ``ConsoleEvents/pushInterval``, only after a change),
    /// the plan into the core when it changed or a flap turned over, held frames whose time came,
    /// the event streams' heartbeat. Returns when the engine's timer must run next for the
    /// console (nil: nothing pending), so an idle relay with no console page open runs no timer.
    func consoleEndOfTurn(_ outbound: inout OutboundBatch) -> Duration? {
        guard let hub = console?.hub else { return nil }
        let now = clock.now()
        if console?.changed == true {
            hub.noteChange()
            console?.changed = false
        }
        var inspected = false
        if hub.pushDelay(now: now) == 0 {
            let inspection = core.inspect(now: now)
            console?.devices = inspection.pairs.flatMap { p in [(p.phone.id, p.id), (p.watch.id, p.id)] }
            hub.publish(inspection, at: now, heldFrames: console?.gate.heldCount ?? 0)
            inspected = true
        }
        let version = hub.planVersion
        let flipped = console?.nextFlip.map { $0 <= now } ?? false
        if inspected || flipped || version != console?.appliedPlanVersion {
            if applyFaults(now, &outbound) { hub.noteChange() }
            console?.appliedPlanVersion = version
            console?.nextFlip = hub.withPlan { $0.nextFlip(after: now) }
        }
        if console?.gate.isEmpty == false {
            for (link, item) in console?.gate.release(now: now.millisecondsSinceEpoch) ?? [] {
                switch item {
                case .frame(let bytes, let type):
                    outbound.send(bytes, to: ConnectionID(rawValue: link.rawValue))
                    countReleased(type)
                case .close(let code, let reason): outbound.close(ConnectionID(rawValue: link.rawValue), code: code, reason: reason)
                }
            }
        }
        var wait = hub.pushDelay(now: now)
        if let beat = hub.heartbeat(now: now) { wait = min(wait ?? .max, beat) }
        for due in [console?.nextFlip?.millisecondsSinceEpoch, console?.gate.nextDue].compactMap({ $0 }) {
            wait = min(wait ?? .max, due - now.millisecondsSinceEpoch)
        }
        // +1: the clock counts whole milliseconds; a timer due before the deadline is a wasted turn.
        return wait.map { .milliseconds(max(0, $0) + 1) }
    }

    /// Reachability and budget faults into the core, disconnects carried out. Returns whether
    /// anything changed.
    private func applyFaults(_ now: Timestamp, _ outbound: inout OutboundBatch) -> Bool {
        callNow = now
        // `execute` below may send through ``consoleSend``, which changes `console`: no copy
        // of it is held across those calls.
        guard let hub = console?.hub, let devices = console?.devices, let applied = console?.budgets else { return false }
        var changed = false
        let (wanted, budgets, disconnects) = hub.withPlan { plan in
            let wanted = Set(devices.filter { plan.isUnreachable($0.device, in: $0.pair, now: now) }.map(\.device))
            // A disconnect waits until a device of its target is connected (and in the console's
            // view, which lags by up to 150 ms): set too early, or while the device is away, it
            // fired on nothing and was gone without a word.
            let due = plan.takeDisconnects { target in
                devices.contains { target.matches(device: $0.device, pair: $0.pair) && core.link(of: $0.device) != nil }
            }
            return (wanted, plan.complicationBudgetSettings, due)
        }
        let current = core.devicesForcedUnreachable
        for device in wanted.subtracting(current) {
            log.info("fault applied", ("kind", "unreachable"), ("device", device.rawValue), ("reachable", "false"))
            execute(core.setForcedUnreachable(device, true, now: now), &outbound)
            changed = true
        }
        for device in current.subtracting(wanted) {
            log.info("fault lifted", ("kind", "unreachable"), ("device", device.rawValue), ("reachable", "true"))
            execute(core.setForcedUnreachable(device, false, now: now), &outbound)
            changed = true
        }
        if budgets != applied {
            for pair in Set(budgets.keys).union(applied.keys) where budgets[pair] != applied[pair] {
                core.setComplicationBudgetLeft(pair, budgets[pair]?.left)
                log.info(
                    "fault applied", ("kind", "complication-budget"), ("pair", pair.rawValue),
                    ("left", budgets[pair].map { String($0.left) } ?? "real"))
            }
            console?.budgets = budgets
            changed = true
        }
        for target in disconnects {
            for (device, pair) in devices where target.matches(device: device, pair: pair) {
                guard let link = core.link(of: device) else { continue }
                log.info("fault fired", ("kind", "disconnect"), ("device", device.rawValue), ("conn", link.description))
                hub.withPlan { $0.count(.disconnect) }
                outbound.close(ConnectionID(rawValue: link.rawValue), code: CloseCode.goingAway.rawValue, reason: "fault: disconnect")
                changed = true
            }
        }
        return changed
    }
}
