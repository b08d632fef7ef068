import Primitives
import RelayCore
import RelayProtocol

/// The console's shared state: the relay's latest inspection, the frame log, the fault plan.
///
/// The engine writes it (snapshots, frames) and reads the plan; the HTTP handler, on the lws
/// service thread, reads it and edits the plan. One `LockedState`, short critical sections.
public final class ConsoleHub: Sendable {
    struct State: Sendable {
        var plan: FaultPlan
        var inspection = RelayInspection(pairs: [], unpairedConnections: 0)
        var inspectedAt = Timestamp(millisecondsSinceEpoch: 0)
        var log = FrameLog()
        /// When each paired device last sent a frame (devices no longer paired are forgotten at
        /// the next inspection).
        var lastSeen: [DeviceID: Timestamp] = [:]
        var heldFrames = 0
        /// The latest widget faces each watch published (its `faces` frames): SVG text and when.
        /// In memory only; a watch no longer paired loses them at the next inspection.
        var faces: [DeviceID: (svg: String, at: Timestamp)] = [:]
        /// Open event streams (``ConsoleEvents``).
        var subscribers: [ConsoleEvents.Subscriber] = []
        /// Whether anything shown changed since the last push; whether the faces did.
        var changed = false
        var facesChanged = false
        var lastPushAt = Int64.min / 2
        var lastHeartbeatAt = Int64.min / 2
        /// The cluster node this console belongs to (nil on a single relay).
        var node: ConsoleJSON.Node?
        /// The node took the lead: the next inspection published is its engine's first.
        var leadsOnNextPublish = false
    }

    /// The token and interface rule.
    public let configuration: ConsoleConfiguration
    let state: LockedState<State>
    private let logLine: @Sendable (String, [(String, String)]) -> Void

    /// A hub whose plan rolls its dice from `seed`; `log` receives `fault set`/`fault cleared` lines.
    public init(
        configuration: ConsoleConfiguration, seed: UInt64 = UInt64.random(in: 1...UInt64.max),
        log: @escaping @Sendable (String, [(String, String)]) -> Void = { _, _ in }
    ) {
        self.configuration = configuration
        self.state = LockedState(State(plan: FaultPlan(seed: seed)))
        self.logLine = log
    }

    // MARK: - The engine's side

    /// Stores the relay's state as of `now` and pushes it (with the frames and faces that
    /// changed) to every open event stream.
    public func publish(_ inspection: RelayInspection, at now: Timestamp, heldFrames: Int) {
        let writes = state.withLock { s in
            if s.leadsOnNextPublish {
                s.node?.leads = true
                s.leadsOnNextPublish = false
            }
            s.inspection = inspection
            s.inspectedAt = now
            s.heldFrames = heldFrames
            if !s.faces.isEmpty {
                let paired = Set(inspection.pairs.map(\.watch.id))
                for device in s.faces.keys where !paired.contains(device) {
                    s.faces[device] = nil
                    s.facesChanged = true
                }
            }
            // Only paired devices show when they were last seen: the rest would stay for as
            // long as the relay runs. (The inspection is taken on the thread that logs frames,
            // so a device seen before it is in it.)
            if !s.lastSeen.isEmpty {
                let paired = Set(inspection.pairs.flatMap { [$0.phone.id, $0.watch.id] })
                s.lastSeen = s.lastSeen.filter { paired.contains($0.key) }
            }
            return push(&s, at: now)
        }
        for (stream, bytes) in writes { stream.write(bytes) }
    }

    /// Says which cluster node this console belongs to and whether it leads.
    ///
    /// Leading shows with the new engine's first ``publish(_:at:heldFrames:)``, never with
    /// what the hub held before (an empty or an old inspection read as the leader's would
    /// satisfy a wait for "0 pairs"). Not leading (at start and at a step-down) empties the
    /// shown state, clears the fault plan (the next leadership starts with none, as a new
    /// leader elsewhere does) and pushes that at once.
    public func setNode(_ id: String, leads: Bool, at now: Timestamp) {
        if leads {
            state.withLock { s in
                s.node = ConsoleJSON.Node(id: id, leads: false)
                s.leadsOnNextPublish = true
            }
            return
        }
        let (writes, cleared) = state.withLock { s in
            s.node = ConsoleJSON.Node(id: id, leads: false)
            s.leadsOnNextPublish = false
            s.inspection = RelayInspection(pairs: [], unpairedConnections: 0)
            s.inspectedAt = now
            s.heldFrames = 0
            if !s.faces.isEmpty {
                s.faces = [:]
                s.facesChanged = true
            }
            let cleared = s.plan.clear(nil)
            return (push(&s, at: now), cleared.count)
        }
        for (stream, bytes) in writes { stream.write(bytes) }
        if cleared > 0 { logLine("faults cleared", [("target", "all"), ("count", String(cleared)), ("why", "no longer leading")]) }
    }

    /// Whether faults set here can take effect: always on a single relay, on a cluster node
    /// only while it leads.
    public var appliesFaults: Bool {
        state.withLock { $0.node?.leads ?? true }
    }

    /// Logs a frame; one from a device also marks it seen.
    public func logFrame(
        _ bytes: [UInt8], direction: String, link: LinkID, member: (device: DeviceID, pair: PairID, role: Role)?,
        at now: Timestamp, fault: String = ""
    ) {
        state.withLock {
            $0.log.append(
                bytes, direction: direction, link: link, member: member.map { ($0.pair, $0.role) }, at: now, fault: fault)
            if direction == "in", let device = member?.device { $0.lastSeen[device] = now }
            $0.changed = true
        }
    }

    /// Stores the latest SVG picture of `watch`'s widget faces (shown on the page).
    public func publishFaces(of watch: DeviceID, svg: String, at now: Timestamp) {
        state.withLock {
            $0.faces[watch] = (svg, now)
            $0.changed = true
            $0.facesChanged = true
        }
    }

    /// Changes with every fault set or cleared (``FaultPlan/version``).
    public var planVersion: Int {
        state.withLock { $0.plan.version }
    }

    /// Runs `body` on the plan (the engine's questions that change it: dice, one-shot faults).
    public func withPlan<R: Sendable>(_ body: (inout FaultPlan) -> R) -> R {
        state.withLock { body(&$0.plan) }
    }

    /// Writes a log line (the engine's `fault fired` lines go to its own logger).
    func log(_ message: String, _ fields: [(String, String)]) {
        logLine(message, fields)
    }

    // MARK: - The API's side

    /// Sets a fault and logs it.
    public func set(_ fault: Fault) throws(FaultError) {
        try state.withLock { (s) throws(FaultError) in
            try s.plan.set(fault)
            s.changed = true
        }
        logLine("fault set", [("kind", fault.kind.rawValue), ("target", fault.target.description), ("param", fault.parameter)])
    }

    /// Whether the console's latest view of the relay has `target` (a pair, or a device of a
    /// pair). The view lags the relay by up to 150 ms, so a target just paired may be missing.
    public func knows(_ target: FaultTarget) -> Bool {
        state.withLock { s in
            s.inspection.pairs.contains { pair in
                switch target {
                case .pair(let id): pair.id == id
                case .device(let id): pair.phone.id == id || pair.watch.id == id
                }
            }
        }
    }

    /// Whether the console's latest view of the relay shows a device of `target` connected.
    public func showsConnected(_ target: FaultTarget) -> Bool {
        state.withLock { s in
            s.inspection.pairs.contains { pair in
                [pair.phone, pair.watch].contains { $0.connected && target.matches(device: $0.id, pair: pair.id) }
            }
        }
    }

    /// Clears the faults on `target` (all when nil) and logs what went.
    @discardableResult
    public func clear(_ target: FaultTarget?) -> [Fault] {
        let removed = state.withLock { s in
            s.changed = true
            return s.plan.clear(target)
        }
        logLine("faults cleared", [("target", target?.description ?? "all"), ("count", String(removed.count))])
        return removed
    }

    /// The console's `/metrics` lines: the faults in force by kind, how often each fired, and
    /// the event streams open.
    public func renderMetrics() -> String {
        let (faults, fired, streams) = state.withLock { s in
            (s.plan.faultsInForce, s.plan.fired, s.subscribers.count { !$0.stream.isClosed })
        }
        var out = "# HELP watchrelay_console_event_streams Console event streams open (at most maxEventStreams).\n"
        out += "# TYPE watchrelay_console_event_streams gauge\n"
        out += "watchrelay_console_event_streams \(streams)\n"
        out += "# HELP watchrelay_faults_active Faults in force (console), by kind.\n"
        out += "# TYPE watchrelay_faults_active gauge\n"
        for kind in FaultKind.allCases {
            out += "watchrelay_faults_active{kind=\"\(kind.rawValue)\"} \(faults.filter { $0.kind == kind }.count)\n"
        }
        out += "# HELP watchrelay_faults_fired_total Frames dropped, held or swallowed and connections closed by faults.\n"
        out += "# TYPE watchrelay_faults_fired_total counter\n"
        for kind in FaultKind.allCases {
            out += "watchrelay_faults_fired_total{kind=\"\(kind.rawValue)\"} \(fired[kind, default: 0])\n"
        }
        return out
    }
}
