import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// The state of one lws context, owned by its service thread; the lws callback dispatches here.
///
/// Created, used and released on the service thread only (see ``ServiceLoop``); other threads
/// reach it solely through its ``CommandInbox``, which is why it has no locks and is not Sendable.
/// This file holds what server and client share: the command drain, the write path, reassembly,
/// close handling and shutdown. Role-specific callbacks are in `ServiceCore+Server.swift`,
/// `ServiceCore+HTTP.swift` and `ServiceCore+Client.swift`.
final class ServiceCore {
    let role: ServiceLoop.Role
    /// `role.isClient`, kept apart: switching over `role` copies it (every reference in its
    /// configuration retained and released), which ``connectionID(_:_:)`` did on every callback.
    let isClient: Bool
    let inbox: CommandInbox
    let resources: LWSContextResources
    /// The context, set right after `lws_create_context` returned and cleared after destroy.
    var context: OpaquePointer?
    /// Open WebSocket connections by ID.
    var connections: [ConnectionID: ConnectionState] = [:]
    /// Client connections between `lws_client_connect_via_info` and ESTABLISHED or an error.
    var pendingConnects: [ConnectionID: ConnectRequest] = [:]
    /// IDs whose cancellation arrived before their connect command (a race in `connect`).
    var cancelledConnects: Set<ConnectionID> = []
    /// HTTP responses waiting for HTTP_WRITEABLE, by the ID kept in the HTTP per-session data.
    var httpResponses: [UInt64: PendingHTTPResponse] = [:]
    /// Open streaming HTTP responses (server-sent events), by the same kind of key.
    var httpStreams: [UInt64: OpenHTTPStream] = [:]
    /// When the shutdown grace period ends; set by ``beginShutdown()``.
    private(set) var shutdownDeadline: ContinuousClock.Instant?
    /// Set on the service thread to leave the loop after the current `lws_service`.
    var stopRequested = false
    /// The client connection inside `lws_client_connect_via_info`, whose failures that call
    /// reports by returning NULL (see ``openClientConnection(_:)``).
    var connectingID: ConnectionID?

    /// A server's events of the current service iteration (nil on a client context).
    let serverEvents: ServerEventBuffer?
    /// Reused for every drain of the inbox, so draining allocates nothing in the steady state.
    private var commandBuffer: [Command] = []
    /// What a client connection's ``ClientMessageHandler`` added in its current call; reused.
    var clientHandlerOutbound = OutboundBatch()
    /// Masking keys of this context's client frames (``ClientFrameBatch``).
    var maskKeys = MaskKeys()
    /// Staging buffer for `lws_write`, which needs `LWS_PRE` writable bytes before the payload
    /// (`LWS_PRE` + a fragment; see ServiceCore+Outbound.swift). lws copies whatever the kernel
    /// does not take, so one buffer serves every connection.
    var writeBuffer: UnsafeMutableRawPointer
    var writeBufferCapacity: Int
    private let serviceThread = pthread_self()
    /// Connections whose queue became non-empty during the current turn, written at its end
    /// (``writeAtEndOfTurn()``) instead of after a WRITEABLE round; reused.
    var writeSoon: [ConnectionID] = []
    /// The round of ``writeSoon`` being written (swapped with it: neither allocates per turn).
    var writeDue: [ConnectionID] = []
    /// Writes made since the last ``publishWriteCounts()``.
    var unpublishedWrites = WriteCounts()
    /// When the handler's timer is due, while armed.
    private var handlerTimerDue: ContinuousClock.Instant?
    /// A server's pings and hang-ups (PROTOCOL.md §2.2); nil for a client, whose one
    /// connection lws keeps alive.
    var keepalive: KeepaliveSchedule?
    /// When the keepalive timer is due, while armed (``MonotonicClock`` nanoseconds).
    private var keepaliveTimerDue: UInt64?
    /// When the keepalive timer last fired: it fires at most every ``keepaliveGranularity``.
    private var keepaliveFiredAt: UInt64 = 0
    /// How late a ping or hang-up may be, so that one timer serves many connections: a
    /// hundredth of the ping interval, from 10 ms to 1 s (300 ms at the relay's 30 s).
    private var keepaliveGranularity: UInt64 = 0
    /// When this turn's first message arrived (nil until one did).
    private var receivedAt: UInt64?
    /// A server's ``ServerConfiguration/maxUnfinishedMessageBytes`` (nil for a client, whose
    /// only peer is the server it chose).
    private let unfinishedBudget: Int?
    /// Bytes a server holds for unfinished messages over all its connections
    /// (``MessageReassembler/heldBytes``); a client keeps it 0.
    private(set) var unfinishedHeld = 0 {
        didSet { inbox.unfinishedBytes.withLock { $0 = unfinishedHeld } }
    }

    init(role: ServiceLoop.Role, inbox: CommandInbox, resources: LWSContextResources) {
        self.role = role
        isClient = role.isClient
        self.inbox = inbox
        self.resources = resources
        if case .server(let configuration, let continuation) = role {
            serverEvents = ServerEventBuffer(continuation, handler: configuration.eventHandler)
            let ping = UInt64(configuration.pingAfterSeconds) * 1_000_000_000
            keepalive = KeepaliveSchedule(
                pingAfter: ping, hangupAfter: UInt64(configuration.hangupAfterSeconds) * 1_000_000_000)
            keepaliveGranularity = min(max(ping / 100, 10_000_000), 1_000_000_000)
            unfinishedBudget = configuration.maxUnfinishedMessageBytes
        } else {
            serverEvents = nil
            unfinishedBudget = nil
        }
        writeBufferCapacity = relay_lws_pre + OutboundMessage.defaultFragmentSize
        writeBuffer = .allocate(byteCount: writeBufferCapacity, alignment: 16)
        serverEvents?.apply = { [unowned self] command in apply(command) }
        // The timer callback finds this core through the owner field (see relay_timer).
        resources.handlerTimer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        resources.keepaliveTimer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        writeBuffer.deallocate()
    }

    // MARK: - Loop

    /// Services the context until a stop is requested or the shutdown deadline passed.
    func run() {
        guard let context else { return }
        while !stopRequested {
            // On libev, one iteration of the loop is what `lws_service` is on poll(): wait for
            // activity or a timer, handle it (every callback runs inside), return.
            var status: Int32 = 0
            receivedAt = nil
            if let loop = resources.eventLoop {
                relay_ev_run_once(loop)
            } else {
                status = lws_service(context, 0)
            }
            serverEvents?.flush()
            // A quiet turn leaves the handler's timer as its last end of turn armed it.
            if let events = serverEvents, events.endsThisTurn {
                if let delay = events.endOfTurn() {
                    armHandlerTimer(delay)
                } else if handlerTimerDue != nil {
                    cancelHandlerTimer()
                }
            }
            writeAtEndOfTurn()
            publishWriteCounts()
            if status < 0 { break }
            if let deadline = shutdownDeadline, ContinuousClock.now >= deadline { break }
        }
    }

    /// Fails the commands that never ran (the inbox is closed, so no more can arrive).
    func discard(_ commands: [Command]) {
        for command in commands {
            switch command {
            case .connect(let request): request.fail(TransportError.shutDown)
            case .attach(_, _, let applied): applied.resume()
            case .send, .close, .cancelConnect, .shutdown, .toHandler, .httpStreamReady: break
            }
        }
    }

    /// After `lws_context_destroy`: reports what lws did not close and finishes every stream.
    func finishStreams() {
        for (id, connection) in connections where !connection.closeReported {
            connection.sink.closed(id, code: nil, reason: "transport shut down")
        }
        connections = [:]
        for request in pendingConnects.values { request.fail(TransportError.shutDown) }
        pendingConnects = [:]
        httpResponses = [:]
        for open in httpStreams.values { open.stream.markClosed() }
        httpStreams = [:]
        serverEvents?.finish()
    }

    // MARK: - Handler timer

    /// Arms the handler's timer `delay` from now (an lws_sul), unless it is armed within 1 ms of that.
    func armHandlerTimer(_ delay: Duration) {
        guard let context else { return }
        let due = ContinuousClock.now + delay
        if let armed = handlerTimerDue, armed - due < .milliseconds(1), due - armed < .milliseconds(1) { return }
        handlerTimerDue = due
        let (seconds, attoseconds) = delay.components
        let microseconds = max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        lws_sul_schedule(context, 0, resources.handlerTimerList, handlerTimerFired, lws_usec_t(microseconds))
        if resources.eventLoop != nil {
            // lws 4.1's libev glue re-arms its timer only after socket activity (its idle
            // callback) or when the timer fires; a sul added between turns, as here, would wait
            // for that. Waking the loop through the cancel pipe is such activity.
            lws_cancel_service(context)
        }
    }

    /// The handler's timer fired (lws_sul callback, on the service thread).
    func handlerTimerDidFire() {
        handlerTimerDue = nil
        serverEvents?.timerFired()
    }

    /// Takes the handler's timer off lws's list (its end of turn asked for none).
    func cancelHandlerTimer() {
        handlerTimerDue = nil
        lws_sul_cancel(resources.handlerTimerList)
    }

    /// Takes every timer of this core off lws's list (before the context is destroyed).
    func cancelTimers() {
        cancelHandlerTimer()
        keepaliveTimerDue = nil
        lws_sul_cancel(resources.keepaliveTimerList)
    }

    // MARK: - Keepalive (server)

    /// Arms the keepalive timer for the schedule's next check (no earlier than a granularity
    /// after it last fired), unless it is armed for that time or earlier.
    ///
    /// Called only inside lws callbacks (ESTABLISHED, the timer's own), after which lws 4.1's
    /// libev glue re-arms its timer for the earliest sul: no wake-up is needed, unlike
    /// ``armHandlerTimer(_:)`` between turns.
    func armKeepaliveTimer(now: UInt64) {
        guard let context, let next = keepalive?.nextCheck else { return }
        let at = max(next, keepaliveFiredAt &+ keepaliveGranularity)
        if let armed = keepaliveTimerDue, armed <= at { return }
        keepaliveTimerDue = at
        let microseconds = at > now ? (at - now) / 1_000 : 0
        lws_sul_schedule(context, 0, resources.keepaliveTimerList, keepaliveTimerFired, lws_usec_t(max(1, microseconds)))
    }

    /// The keepalive timer fired (lws_sul callback, on the service thread): pings the
    /// connections silent for the ping interval, hangs up on those silent for the hang-up time.
    func keepaliveTimerDidFire() {
        keepaliveTimerDue = nil
        guard keepalive != nil else { return }
        let now = MonotonicClock.nanoseconds()
        keepaliveFiredAt = now
        // At most this many connections per firing; the rest come one granularity later.
        let actions = keepalive!.due(now: now, limit: 4_096) { connections[$0]?.lastHeardAt }
        for action in actions {
            switch action {
            case .ping(let id):
                guard let connection = connections[id] else { continue }
                sendPing(connection)
            case .hangUp(let id):
                guard let connection = connections[id] else { continue }
                // Without a close handshake, as lws's own keepalive did: the peer is not
                // answering.
                drop(connection)
            }
        }
        armKeepaliveTimer(now: now)
    }

    /// Writes a ping on `connection` now, ahead of its queued frames (a control frame may come
    /// between the frames of a message, RFC 6455 §5.4), behind whatever lws still holds. Its
    /// one-byte payload is not optional: lws 4.1 has no callback for an empty pong.
    private func sendPing(_ connection: ConnectionState) {
        // After either close frame, a ping can only be answered by the end of the connection.
        guard !connection.localCloseSent, connection.peerClose == nil, !connection.dropRequested else { return }
        var frame: [UInt8] = [0x89, 0x01, 0x6B]  // FIN + ping, 1 byte, "k"
        if !writeRaw(&frame, connection) { drop(connection) }
    }

    /// Has lws close `connection` without a close handshake at its next look at its timers
    /// (CLOSED follows). Final: a close asked for later in the same turn (a reconnecting
    /// device's `hello` closes its old connection) would otherwise replace the kill with the
    /// wait for a close handshake (``requestClose(_:_:flushSeconds:)``'s `lws_set_timeout`),
    /// and the peer that stopped answering would get a close frame and 5 or 30 s more.
    func drop(_ connection: ConnectionState) {
        connection.dropRequested = true
        connection.outbound.removeAll()
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }

    // MARK: - Callback dispatch

    /// Handles one lws callback; the return value goes back to lws (non-zero closes or refuses).
    func handle(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ data: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        assert(pthread_equal(pthread_self(), serviceThread) != 0, "lws callback off the service thread")
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        case LWS_CALLBACK_RECEIVE, LWS_CALLBACK_CLIENT_RECEIVE:
            return receive(wsi, user, data, length)
        case LWS_CALLBACK_RECEIVE_PONG:
            if keepalive != nil, let id = connectionID(wsi, user), let connection = connections[id] {
                connection.lastHeardAt = MonotonicClock.nanoseconds()
            }
            return 0
        case LWS_CALLBACK_SERVER_WRITEABLE, LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let id = connectionID(wsi, user), let connection = connections[id] else { return 0 }
            if !connection.outbound.isEmpty { unpublishedWrites.afterWriteable += 1 }
            return writeNext(connection)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // `data` is lws's buffer, valid only now: CloseFrame copies the code and reason out.
            let payload = UnsafeRawBufferPointer(start: data, count: length)
            let connection = connectionID(wsi, user).flatMap { connections[$0] }
            // The answer to our close frame (writeClose): the handshake is done, close now
            // (lws sends nothing more), and the close reported is ours.
            if connection?.localCloseSent == true { return -1 }
            if let refusal = Self.malformedCloseRefusal(payload) {
                // The refusal is written here, and the close reported is it, not the frame
                // refused. Then -1 with no close reason set: lws closes the connection at once
                // (after sending what it still holds), for the peer's close came first and the
                // handshake is complete (RFC 6455 §7.1.1). Through `lws_close_reason`, lws 4.1
                // sent the frame and then waited 5 s for an answer that was never owed.
                let close = CloseFrame(code: UInt16(refusal.status.rawValue), reason: refusal.reason)
                if let connection, !connection.dropRequested {
                    _ = writeCloseFrame(close, connection)
                }
                return -1
            }
            connection?.peerClose = CloseFrame(payload: payload)
            return 0
        case LWS_CALLBACK_CLOSED, LWS_CALLBACK_CLIENT_CLOSED:
            connectionClosed(wsi, user)
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            // The last callback of every wsi. lws skips CLOSED / CLIENT_CONNECTION_ERROR on some
            // paths (a client that times out waiting for the 101 only gets the h1 role's
            // CLOSED_CLIENT_HTTP), so whatever is still registered for this wsi ends here.
            if isClient || LWSContextResources.isBoundToWebSocketProtocol(wsi) {
                connectionClosed(wsi, user)
            } else if !httpStreams.isEmpty {
                // An open stream whose CLOSED_HTTP did not come: its wsi must not outlive this.
                httpStreamDestroyed(wsi)
            }
            return 0
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return filterUpgrade(wsi)
        case LWS_CALLBACK_ESTABLISHED:
            return serverEstablished(wsi, user)
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, user, data, length)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi, user)
        case LWS_CALLBACK_CLOSED_HTTP:
            httpClosed(user)
            return 0
        case LWS_CALLBACK_RAW_ADOPT:
            return refuseRawConnection(wsi)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return writeRawRefusal(wsi)
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            return clientEstablished(wsi)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            clientConnectionError(wsi, data, length)
            return 0
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            return appendHandshakeHeaders(wsi, data, length)
        default:
            return 0
        }
    }

    /// The ID lws keeps for a WebSocket connection: in the per-session data on a server, in the
    /// opaque user data on a client (set at connect time, so even a connection error finds it).
    func connectionID(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> ConnectionID? {
        let raw: UInt64
        if isClient {
            raw = UInt64(UInt(bitPattern: lws_get_opaque_user_data(wsi)))
        } else {
            // lws owns and zero-fills the per-session data; it holds a UInt64 written at ESTABLISHED.
            guard let user else { return nil }
            raw = user.load(as: UInt64.self)
        }
        return raw == 0 ? nil : ConnectionID(rawValue: raw)
    }

    // MARK: - Inbound

    /// RFC 6455 §5.5.1 and §7.4.1 for a close frame the peer sent: a body of exactly one byte is
    /// a protocol error (1002), a reason that is not UTF-8 is invalid data (1007). lws 4.1
    /// checks neither (it echoes such a frame; it checks the reason's UTF-8 only with
    /// `LWS_SERVER_OPTION_VALIDATE_UTF8`, which the relay leaves off so that a text message
    /// of invalid UTF-8 gets `bad_json`, and then it drops the connection without a close
    /// frame), so the callback does: it writes its own close frame and returns -1, so that lws
    /// sends no echo and closes the connection. Nil (echo the peer's frame) otherwise.
    private static func malformedCloseRefusal(_ payload: UnsafeRawBufferPointer) -> (status: lws_close_status, reason: String)? {
        if payload.count == 1 {
            return (LWS_CLOSE_STATUS_PROTOCOL_ERR, "close frame with a 1-byte body")
        }
        if payload.count > 2, String(validating: payload[2...], as: UTF8.self) == nil {
            return (LWS_CLOSE_STATUS_INVALID_PAYLOAD, "close reason is not UTF-8")
        }
        return nil
    }

    private func receive(
        _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ data: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        guard let id = connectionID(wsi, user), let connection = connections[id] else { return 0 }
        if keepalive != nil {
            // PROTOCOL.md §2.2: anything received keeps the connection alive, not only pongs;
            // also what is ignored below (a slow consumer still sending while it gets to its
            // 1008 is not hung up for it). One clock read per turn (its first arrival).
            let now = receivedAt ?? MonotonicClock.nanoseconds()
            receivedAt = now
            connection.lastHeardAt = now
        }
        // After our close frame (writeClose), or once the owner was told the connection is
        // gone, only the peer's close matters (RFC 6455 §1.4; lws 4.1 drops data frames itself
        // only in its own close states).
        guard !connection.closeReported, !connection.localCloseSent else { return 0 }
        // lws owns `data` and reuses it after this callback; the reassembler copies what it keeps.
        let chunk = UnsafeRawBufferPointer(start: data, count: length)
        let heldBefore = connection.reassembler.heldBytes  // 0 unless a message is unfinished
        let outcome = connection.reassembler.consume(
            chunk, frameIsBinary: lws_frame_is_binary(wsi) != 0, isFinal: lws_is_final_fragment(wsi) != 0,
            remainingInFrame: Int(lws_remaining_packet_payload(wsi)))
        let heldAfter = connection.reassembler.heldBytes
        if heldAfter != heldBefore { unfinishedChanged(by: heldAfter - heldBefore) }
        if connection.observer != nil || connection.handler != nil, let event = ClientEvent(outcome) {
            connection.observer?.received(event, at: MonotonicClock.nanoseconds())
            if let handler = connection.handler, runHandler(handler, event, on: id) == .consume { return 0 }
        }
        switch outcome {
        case .incomplete: break
        case .message(let bytes): connection.sink.message(id, bytes)
        case .binary: connection.sink.binary(id)
        case .tooLarge(let size): connection.sink.tooLarge(id, size: size)
        }
        return 0
    }

    /// Counts what unfinished messages hold; past a server's budget, closes the connection
    /// holding the largest (1013, Try Again Later) and drops its bytes, until under it.
    private func unfinishedChanged(by delta: Int) {
        guard let budget = unfinishedBudget else { return }  // a client counts nothing
        unfinishedHeld += delta
        while unfinishedHeld > budget {
            // Only under attack (or a budget set too low): a walk of the connections.
            guard let largest = connections.values.max(by: { $0.reassembler.heldBytes < $1.reassembler.heldBytes }),
                largest.reassembler.heldBytes > 0
            else { return }
            unfinishedHeld -= largest.reassembler.heldBytes
            largest.reassembler.abandon()
            requestClose(largest, CloseFrame(code: Self.unfinishedCloseCode, reason: "unfinished messages over the relay's budget"))
        }
    }

    /// RFC 6455's 1013, Try Again Later: the server cannot hold this message now.
    static let unfinishedCloseCode: UInt16 = 1013

    // MARK: - Commands

    /// Applies every queued command; called on EVENT_WAIT_CANCELLED (once per protocol per wake).
    private func drainInbox() {
        inbox.take(into: &commandBuffer)
        guard !commandBuffer.isEmpty else { return }
        for command in commandBuffer {
            switch command {
            case .send, .close: apply(command)
            case .toHandler(let message): serverEvents?.received(message)
            case .connect(let request): openClientConnection(request)
            case .cancelConnect(let id): cancelConnect(id)
            case .attach(let id, let attachment, let applied):
                attach(attachment, to: id)
                applied.resume()
            case .shutdown: beginShutdown()
            case .httpStreamReady(let id):
                if let open = httpStreams[id] { lws_callback_on_writable(open.wsi) }
            }
        }
        commandBuffer.removeAll(keepingCapacity: commandBuffer.capacity <= 4096)
    }

    /// Queues a message or close (from the inbox or from the handler, on the service thread).
    func apply(_ command: Command) {
        switch command {
        case .send(let id, let message): enqueue(message, on: id)
        case .close(let id, let code, let reason):
            if let connection = connections[id] {
                requestClose(connection, CloseFrame(code: code, reason: reason))
            }
        case .connect, .cancelConnect, .attach, .shutdown, .toHandler, .httpStreamReady: break
        }
    }

    // MARK: - Close and shutdown

    /// Reports the end of a connection (or of a pending client connect); idempotent.
    private func connectionClosed(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) {
        guard let id = connectionID(wsi, user) else { return }  // e.g. an upgrade the filter refused
        if let connection = connections.removeValue(forKey: id) {
            if unfinishedBudget != nil, connection.reassembler.heldBytes > 0 { unfinishedHeld -= connection.reassembler.heldBytes }
            let report = connection.closeReport
            if !connection.closeReported { connection.sink.closed(id, code: report.code, reason: report.reason) }
        } else if id != connectingID, let request = pendingConnects.removeValue(forKey: id) {
            request.fail(
                TransportError.connectionFailed(
                    url: request.url.text, reason: "closed before the upgrade completed (timeout or peer hung up)"))
        }
        if shutdownDeadline != nil && connections.isEmpty { stopRequested = true }
    }

    /// Closes every connection with 1001 and arms the grace-period deadline; the loop stops when
    /// the last connection closed or the deadline passed.
    func beginShutdown() {
        guard shutdownDeadline == nil, let context else { return }
        let grace: Duration
        let frame: CloseFrame
        switch role {
        case .server(let configuration, _):
            grace = configuration.shutdownGracePeriod
            frame = CloseFrame(code: 1001, reason: "relay shutting down")
        case .client(let configuration):
            grace = configuration.shutdownGracePeriod
            frame = CloseFrame(code: 1001, reason: "client shutting down")
        }
        shutdownDeadline = .now + grace
        for connection in connections.values { requestClose(connection, frame) }
        for request in pendingConnects.values { request.fail(TransportError.shutDown) }
        pendingConnects = [:]
        if connections.isEmpty {
            stopRequested = true
            return
        }
        // lws_service sleeps until something happens; this timer makes it return at the deadline.
        let (seconds, attoseconds) = grace.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        lws_sul_schedule(context, 0, resources.shutdownTimer, shutdownTimerFired, lws_usec_t(max(1, microseconds)))
    }
}
