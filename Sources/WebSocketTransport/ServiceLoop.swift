import CWebSockets
import Dispatch
import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// Starts the service thread of one lws context and runs the context's whole life on it.
///
/// Everything that touches the context happens on that thread: `lws_create_context`, every
/// callback, `lws_service`, `lws_context_destroy`. Other threads only post to the
/// ``CommandInbox`` (which calls `lws_cancel_service`, the one thread-safe lws call).
enum ServiceLoop {
    /// What the context is for; decides protocols, options, and how events are reported.
    enum Role: Sendable {
        case server(ServerConfiguration, AsyncStream<[ServerEvent]>.Continuation)
        case client(ClientConfiguration)

        var isClient: Bool {
            if case .client = self { true } else { false }
        }
    }

    /// Spawns the service thread, creates the context there, and waits until it is ready.
    ///
    /// Blocks the caller only for context creation (milliseconds).
    /// - Returns: the port the server listens on (0 for a client context).
    static func start(role: Role, inbox: CommandInbox) throws(TransportError) -> Int {
        LibraryLog.configureOnce()
        let startup = StartupSignal()
        try spawnThread {
            run(role: role, inbox: inbox, startup: startup)
        }
        return try startup.wait()
    }

    /// The body of the service thread.
    private static func run(role: Role, inbox: CommandInbox, startup: StartupSignal) {
        ReceiveBufferArena.install()
        var resources = LWSContextResources(role: role)
        let core = ServiceCore(role: role, inbox: inbox, resources: resources)
        // Retain the core once for lws (the context's user pointer). It is released in
        // `tearDown`, after lws_context_destroy returned, so every callback (those during
        // destroy included) sees a live core.
        let retainedCore = Unmanaged.passRetained(core)
        let (created, code) = LibraryLog.holdingLines({ () -> (OpaquePointer?, Int32) in
            var info = resources.creationInfo(user: retainedCore.toOpaque())
            errno = 0
            var created = lws_create_context(&info)
            if created == nil, resources.dropEventLoop() {
                // Either the libev plugin (package libwebsockets-evlib-ev) is missing or unusable,
                // or the failure is not the loop's (port in use): lws's own poll() loop tells.
                let libevLines = LibraryLog.takeHeldLines()
                info = resources.creationInfo(user: retainedCore.toOpaque())
                errno = 0
                created = lws_create_context(&info)
                if created != nil {
                    // It was the plugin: poll() works, only its cost grows with the connection count.
                    // What lws said of the libev attempt is why.
                    LibraryLog.holdAgain(libevLines)
                    let note = "watchrelay: lws could not use its libev plugin; running on poll() instead\n"
                    _ = note.withCString { write(2, $0, strlen($0)) }
                }
                // Else the second attempt's lines say the cause once (a TLS key that does not
                // match its certificate was printed twice, once per attempt).
            }
            return (created, errno)
        }, drop: { $0.0 == nil && $0.1 == EADDRINUSE && !role.isClient })
        guard let context = created else {
            tearDown(context: nil, core: retainedCore, resources: resources, inbox: inbox)
            var code = code
            var message =
                "lws could not create the context (address not usable, or TLS files unreadable; lws logs the cause); "
                + "last errno: \(String(cString: strerror(code)))"
            if code == EADDRINUSE, case .server(let configuration, _) = role {
                message = "port \(configuration.port) on \(configuration.host) is in use: another process listens on it"
            } else if case .server(let configuration, _) = role, configuration.tlsCertificatePath != nil {
                // OpenSSL leaves errno as its last file probe left it ("No such file or
                // directory" for a certificate that is there but not PEM): not the cause.
                code = 0
                message = "lws could not create the context: its lines above say why (a TLS certificate or key it cannot use, or an address not usable)"
            }
            startup.finish(.failure(.libraryCall(operation: "lws_create_context", code: code, message: message)))
            return
        }
        core.context = context
        core.serverEvents?.context = context
        var port = 0
        if case .server(let configuration, _) = role {
            port = lws_get_vhost_by_name(context, "default").map { Int(lws_get_vhost_listen_port($0)) } ?? 0
            guard port > 0 else {
                // lws defers a listener whose interface is not up yet instead of failing.
                tearDown(context: context, core: retainedCore, resources: resources, inbox: inbox)
                startup.finish(
                    .failure(
                        .libraryCall(
                            operation: "lws_get_vhost_listen_port", code: Int32(port),
                            message:
                                "not listening on \(configuration.host):\(configuration.port) (address not usable?)")))
                return
            }
        }
        inbox.open(context: context)
        startup.finish(.success(port))

        core.run()

        tearDown(context: context, core: retainedCore, resources: resources, inbox: inbox)
    }

    /// Destroys the context (if any) and frees everything, in the order lws needs.
    private static func tearDown(
        context: OpaquePointer?, core retainedCore: Unmanaged<ServiceCore>, resources: LWSContextResources,
        inbox: CommandInbox
    ) {
        let core = retainedCore.takeUnretainedValue()
        core.discard(inbox.close())  // from here on no thread calls lws_cancel_service
        core.serverEvents?.context = nil  // closes during the destroy are flushed by finishStreams
        if let context {
            core.cancelTimers()
            lws_context_destroy(context)
        }
        core.context = nil
        core.finishStreams()
        // Release the retain taken for lws in `run`: the context and its callbacks are gone.
        retainedCore.release()
        resources.deallocate()
        inbox.finish()
    }

    /// Starts a detached POSIX thread running `body`.
    private static func spawnThread(_ body: @escaping @Sendable () -> Void) throws(TransportError) {
        final class Payload {
            let body: @Sendable () -> Void
            init(body: @escaping @Sendable () -> Void) {
                self.body = body
            }
        }
        // Retained here for the new thread, which takes over the retain (takeRetainedValue).
        let payload = Unmanaged.passRetained(Payload(body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let payload = Unmanaged<Payload>.fromOpaque(raw).takeRetainedValue()
                payload.body()
                return nil
            }, payload)
        guard result == 0 else {
            Unmanaged<Payload>.fromOpaque(payload).release()
            throw .libraryCall(operation: "pthread_create", code: result, message: String(cString: strerror(result)))
        }
        pthread_detach(thread)
    }
}

/// Hands the service thread's startup result to the thread waiting in `start`.
private final class StartupSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let result = LockedState<Result<Int, TransportError>?>(nil)

    func finish(_ outcome: Result<Int, TransportError>) {
        result.withLock { $0 = outcome }
        semaphore.signal()
    }

    func wait() throws(TransportError) -> Int {
        semaphore.wait()
        let outcome = result.withLock { $0 } ?? .failure(.shutDown)
        return try outcome.get()
    }
}

/// lws' process-wide log level.
enum LibraryLog {
    /// lws logs notices (and a warning per refused upgrade) to stderr by default; keep errors
    /// only, unless `WATCHRELAY_LWS_LOG_LEVEL` holds an lws `LLL_*` bitmask. Set once, before the
    /// first context exists, because lws reads the level without a lock.
    private static let configured: Bool = {
        var level = Int32(LLL_ERR)
        if let text = getenv("WATCHRELAY_LWS_LOG_LEVEL"), let value = Int32(String(cString: text)) {
            level = value
        }
        lws_set_log_level(level) { level, line in
            guard let line else { return }
            LibraryLog.emit(level, line)
        }
        return true
    }()

    static func configureOnce() {
        _ = configured
    }

    /// Lines lws logs on a thread that is creating a context, by thread (several contexts
    /// are created at once on their own service threads), held until it is known whether
    /// they say more than the transport's own error.
    private static let held = LockedState<[pthread_t: [(Int32, String)]]>([:])

    private static func emit(_ level: Int32, _ line: UnsafePointer<CChar>) {
        let thread = pthread_self()
        let kept = held.withLock { h -> Bool in
            guard h[thread] != nil else { return false }
            h[thread]?.append((level, String(cString: line)))
            return true
        }
        if !kept { lwsl_emit_stderr(level, line) }
    }

    /// Runs `body` (a context's creation, on this thread) with the lines lws logs on this
    /// thread held back; they are printed afterwards unless `drop` says the caller's own
    /// message covers them (a port in use: lws's three lines per attempt say the same, less
    /// clearly).
    /// The lines held so far on this thread, no longer held (inside ``holdingLines(_:drop:)``).
    static func takeHeldLines() -> [(Int32, String)] {
        let thread = pthread_self()
        return held.withLock { h in
            defer { if h[thread] != nil { h[thread] = [] } }
            return h[thread] ?? []
        }
    }

    /// Holds `lines` again, before those held since (inside ``holdingLines(_:drop:)``).
    static func holdAgain(_ lines: [(Int32, String)]) {
        let thread = pthread_self()
        held.withLock { h in
            if let since = h[thread] { h[thread] = lines + since }
        }
    }

    static func holdingLines<T>(_ body: () -> T, drop: (T) -> Bool) -> T {
        let thread = pthread_self()
        held.withLock { $0[thread] = [] }
        let result = body()
        let lines = held.withLock { $0.removeValue(forKey: thread) ?? [] }
        if !drop(result) {
            for (level, line) in lines { lwsl_emit_stderr(level, line) }
        }
        return result
    }
}
