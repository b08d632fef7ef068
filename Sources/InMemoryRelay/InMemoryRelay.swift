import Foundation
import RelayClient
import RelayCore
import RelayProtocol

/// The relay and its devices in one actor: a ``RelayState`` wired straight to one
/// ``SessionCore`` per device, with no sockets, no threads and no timers.
///
/// Each device is a ``SessionClient`` the apps take in place of a live session. Frames go
/// through the real codec and the real relay core; time moves only with ``advance(by:)``
/// (request timeouts, back-off, reply timeouts); a device's state survives "restarts" (a new
/// ``session(role:deviceName:foreground:)`` with the same name resumes it), and its writes
/// can be made to fail (``setFailingWrites(_:_:)``). For tests and the simulator.
public actor InMemoryRelay {
    /// One device: its core, its in-memory store and who waits on it.
    struct Device {
        var name: String
        /// The key of its state in ``stores``.
        var store: String
        var core: SessionCore
        var link: LinkID?
        var online = true
        var sink: AsyncStream<SessionEvent>.Continuation
        var waiters: [SessionTicket: CheckedContinuation<SessionOutcome, any Error>] = [:]
        var finished: [SessionTicket: Result<SessionOutcome, RelaySessionError>] = [:]
        var deadline: ContinuousClock.Instant?
    }

    enum Work {
        case device(Int, SessionInput)
        case relay(RelayEvent)
    }

    var relay: RelayState
    var devices: [Int: Device] = [:]
    /// What each device name's store holds (kept across sessions of that name).
    var stores: [String: SessionSnapshot] = [:]
    var failingWrites: Set<String> = []
    /// Whether the relay is up: while it is down every link is gone and every connect fails.
    var running = true
    /// The ``followRealTime()`` timer waiting for the next due time or a change.
    var wake: CheckedContinuation<Void, Never>?
    /// Who reads ``statsUpdates()``.
    var statsSinks: [Int: AsyncStream<(connections: Int, pairs: Int, queued: Int)>.Continuation] = [:]
    var nextSubscriber = 0
    /// While following the wall: the timer's task, when it began, and the time then.
    var follower: Task<Void, Never>?
    var wallBase: (start: ContinuousClock.Instant, elapsed: Duration)?
    var links: [LinkID: Int] = [:]
    var nextLink: UInt64 = 0
    var nextDevice = 0
    var nextTicket: UInt64 = 0
    var queue: [Work] = []
    var elapsed = Duration.zero
    let origin = ContinuousClock.now
    let wallOrigin: Timestamp

    /// A relay with no pairs, its clock starting at `start`.
    public init(
        configuration: RelayConfiguration = RelayConfiguration(),
        start: Timestamp = Timestamp(millisecondsSinceEpoch: 1_796_000_000_000)
    ) {
        wallOrigin = start
        relay = RelayState(
            configuration: configuration,
            environment: RelayEnvironment(
                pairingCode: { String(Int.random(in: 100_000...999_999)) },
                token: { (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "") },
                identifier: { "\($0)-\(UUID().uuidString.lowercased().prefix(12))" },
                hashToken: { "memory:" + $0 }))
    }

    var instant: ContinuousClock.Instant { origin + elapsed }
    var timestamp: Timestamp {
        wallOrigin.adding(milliseconds: elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    // MARK: - Devices

    /// A new session for the device `deviceName` (resuming its stored state, if any).
    /// - Parameter store: which stored state to resume and keep (default `deviceName`): a
    ///   phone with one pair per watch keeps one per watch under the same device name.
    public func session(role: Role, deviceName: String, foreground: Bool = true, store: String? = nil) -> SessionClient {
        nextDevice += 1
        let id = nextDevice
        let (events, sink) = AsyncStream.makeStream(of: SessionEvent.self)
        let settings = SessionCore.Settings(
            role: role, deviceName: deviceName, foreground: foreground, backoff: [0.05, 0.2, 1],
            requestTimeout: .seconds(10), idPrefix: "\(deviceName.prefix(8))-\(id)", seed: UInt64(id))
        let key = store ?? deviceName
        devices[id] = Device(
            name: deviceName, store: key, core: SessionCore(settings: settings, restored: stores[key] ?? SessionSnapshot()),
            sink: sink)
        return SessionClient(
            events: events,
            activate: { _ = try await self.perform(id, .activate) },
            close: { await self.close(id) },
            uninstallApp: { await self.close(id, uninstalling: true) },
            beginPairing: {
                guard case .pairingCode(let code) = try await self.perform(id, .beginPairing) else {
                    throw RelaySessionError.relay(code: .internal, message: "unexpected answer to pair.begin")
                }
                return code
            },
            pair: { _ = try await self.perform(id, .pair(code: $0)) },
            unpair: { _ = try await self.perform(id, .unpair) },
            setForeground: { _ = try? await self.perform(id, .setForeground($0)) },
            sendMessage: {
                guard case .reply(let reply) = try await self.perform(id, .sendMessage($0, wantsReply: $1)) else { return nil }
                return reply
            },
            reply: { _ = try await self.perform(id, .reply(to: $0, $1)) },
            updateApplicationContext: { _ = try await self.perform(id, .updateContext($0)) },
            transferUserInfo: { try Self.transfer(await self.perform(id, .transferUserInfo($0))) },
            transferCurrentComplicationUserInfo: { try Self.transfer(await self.perform(id, .transferComplication($0))) },
            cancel: { _ = try await self.perform(id, .cancel(transferID: $0.id)) },
            acknowledge: { _ = try? await self.perform(id, .acknowledge($0)) },
            synchronize: { _ = try await self.perform(id, .synchronize) },
            status: { await self.status(id) })
    }

    /// Takes the device offline (its connection drops; reconnects fail) or back online.
    public func setOnline(_ deviceName: String, _ online: Bool) {
        for (id, device) in devices where device.name == deviceName {
            devices[id]?.online = online
            if !online, let link = device.link { drop(id, link, code: 1006) }
        }
        drain()
    }

    /// Makes every write of `deviceName`'s session fail (true) or work again.
    public func setFailingWrites(_ deviceName: String, _ failing: Bool) {
        if failing { failingWrites.insert(deviceName) } else { failingWrites.remove(deviceName) }
    }

    /// Moves time on: the relay's reply timeouts, and every device deadline that came due.
    public func advance(by duration: Duration) {
        catchUpWithWall()
        elapsed += duration
        queue.append(.relay(.tick))
        for (id, device) in devices.sorted(by: { $0.key < $1.key }) {
            if let d = device.deadline, d <= instant { queue.append(.device(id, .tick)) }
        }
        drain()
    }

    private static func transfer(_ outcome: SessionOutcome) throws -> UserInfoTransfer {
        guard case .transfer(let t) = outcome else {
            throw RelaySessionError.relay(code: .internal, message: "unexpected answer to a transfer")
        }
        return t
    }

    private func status(_ id: Int) -> SessionStatus {
        devices[id].map { SessionStatus($0.core) } ?? SessionStatus(
            SessionCore(settings: SessionCore.Settings(role: .watch, deviceName: "", idPrefix: "x", seed: 0)))
    }

    private func perform(_ id: Int, _ command: SessionCommand) async throws -> SessionOutcome {
        nextTicket += 1
        let ticket = SessionTicket(nextTicket)
        return try await withCheckedThrowingContinuation { continuation in
            guard devices[id] != nil else {
                continuation.resume(throwing: RelaySessionError.notActivated)
                return
            }
            devices[id]?.waiters[ticket] = continuation
            queue.append(.device(id, .command(ticket, command)))
            drain()
        }
    }

    /// Closes device `id`'s session (saying first, when `uninstalling`, that its app was
    /// uninstalled) and forgets the device; its stored state stays for its next session.
    /// Returns whether the command succeeded (an uninstall: whether the relay was told).
    @discardableResult
    private func close(_ id: Int, uninstalling: Bool = false) async -> Bool {
        let done = (try? await perform(id, uninstalling ? .uninstallApp : .close)) != nil
        devices.removeValue(forKey: id)?.sink.finish()
        return done
    }
}
