import CWebSockets
import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// A request from any thread to a service thread, applied on `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
enum Command: Sendable {
    /// Queue a message on a connection (dropped if the connection is gone or closing).
    case send(ConnectionID, OutboundMessage)
    /// Close a connection after its queued messages are flushed.
    case close(ConnectionID, code: UInt16, reason: String)
    /// Open a client connection (client contexts only).
    case connect(ConnectRequest)
    /// Abandon a client connection whose `connect` call was cancelled.
    case cancelConnect(ConnectionID)
    /// Attach (or, with nil, detach) a client connection's observer or handler, then resume the caller.
    case attach(ConnectionID, ClientAttachment, CheckedContinuation<Void, Never>)
    /// Close every connection with 1001, then stop the loop (see ``ServiceCore/beginShutdown()``).
    case shutdown
    /// Hand a value to the server's ``ServerEventHandler`` (see ``WebSocketServer/post(_:)``).
    case toHandler(any Sendable)
    /// A streaming HTTP response (by its per-session key) has bytes to send or was closed.
    case httpStreamReady(UInt64)
}

/// The only way into a service thread: a `Mutex`-protected command list plus `lws_cancel_service`.
///
/// (The mutex is a ``LockedState``: a `Synchronization.Mutex` that ThreadSanitizer can follow.)
///
/// Any thread may post; the service thread takes the whole list at once on
/// `LWS_CALLBACK_EVENT_WAIT_CANCELLED`. The service thread is woken only when the list goes from
/// empty to non-empty, because one pending wake-up already guarantees a drain.
final class CommandInbox: Sendable {
    /// The context's write counts, published by the service thread once per turn in which it
    /// wrote (``ServiceCore/publishWriteCounts()``) and read from any thread.
    let writeCounts = LockedState(WriteCounts())
    /// Bytes a server holds for unfinished messages (``ServiceCore/unfinishedHeld``), published
    /// by the service thread whenever it changes (only messages that arrive in pieces change it).
    let unfinishedBytes = LockedState(0)

    /// Where the context is in its life; commands are accepted while `starting` or `running`.
    private enum Phase {
        case starting, running, closed, stopped
    }

    /// The context pointer as the inbox holds it.
    ///
    /// `@unchecked Sendable` is safe: other threads use the pointer only for `lws_cancel_service`
    /// (the thread-safe lws call), and only while the context is alive: under the inbox lock, or
    /// between taking it out under the lock and ending the wake-up it counts in `wakesInFlight`.
    private struct ContextHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var commands: [Command] = []
        /// The live context, or nil before it exists and from just before it is destroyed.
        var context: ContextHandle?
        var phase = Phase.starting
        /// Posters between deciding to wake the service thread and `lws_cancel_service`
        /// returning; ``close()`` waits for them, so the context outlives every wake-up.
        var wakesInFlight = 0
        var shutdownRequested = false
        /// `shutdown()` callers waiting for the context to be destroyed.
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedState(State())

    /// Queues a command for the service thread.
    ///
    /// - Returns: false if the context is shut down (or going down), in which case nothing was queued.
    @discardableResult
    func post(_ command: Command) -> Bool {
        post { $0.append(command) }
    }

    /// Queues several commands, in order, with one lock and at most one wake-up.
    ///
    /// - Returns: false if the context is shut down (or going down), in which case nothing was queued.
    @discardableResult
    func post(contentsOf commands: [Command]) -> Bool {
        guard !commands.isEmpty else { return true }
        return post { $0.append(contentsOf: commands) }
    }

    /// Appends under the lock; wakes the service thread after releasing it, if the list was empty.
    ///
    /// `lws_cancel_service` (the one lws call allowed off the service thread) wakes the service
    /// thread, which goes straight for this lock to take the commands. Called under the lock, on
    /// a busy core the woken thread preempted the poster inside its critical section and then
    /// spun and slept on the lock (13 % of the relay's CPU at 10,000 messages/s, by perf). The
    /// wake-up is counted in `wakesInFlight` instead, which ``close()`` waits out before the
    /// context is destroyed.
    private func post(_ append: (inout [Command]) -> Void) -> Bool {
        let wake = state.withLock { state -> (queued: Bool, context: ContextHandle?) in
            guard state.phase == .starting || state.phase == .running else { return (false, nil) }
            let wasEmpty = state.commands.isEmpty
            append(&state.commands)
            guard wasEmpty, let context = state.context else { return (true, nil) }
            state.wakesInFlight += 1
            return (true, context)
        }
        if let context = wake.context {
            lws_cancel_service(context.pointer)
            state.withLock { $0.wakesInFlight -= 1 }
        }
        return wake.queued
    }

    /// Asks the service thread to shut down (once, however often called) and returns when the
    /// context has been destroyed and every event stream finished.
    func shutdownAndWait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let stoppedAlready = state.withLock { state -> Bool in
                if state.phase == .stopped { return true }
                state.stopWaiters.append(waiter)
                Self.requestShutdown(&state)
                return false
            }
            if stoppedAlready { waiter.resume() }
        }
    }

    /// Asks the service thread to shut down without waiting (for `deinit`).
    func requestShutdown() {
        state.withLock { Self.requestShutdown(&$0) }
    }

    private static func requestShutdown(_ state: inout State) {
        guard !state.shutdownRequested, state.phase == .starting || state.phase == .running else { return }
        state.shutdownRequested = true
        let wasEmpty = state.commands.isEmpty
        state.commands.append(.shutdown)
        if wasEmpty, let context = state.context {
            lws_cancel_service(context.pointer)
        }
    }

    // MARK: - Service thread only

    /// Publishes the new context so posts can wake it. Service thread, right after creation.
    func open(context: OpaquePointer) {
        state.withLock { state in
            state.context = ContextHandle(pointer: context)
            state.phase = .running
            if !state.commands.isEmpty { lws_cancel_service(context) }
        }
    }

    /// Moves every queued command into `buffer` (which must be empty), leaving the inbox empty.
    func take(into buffer: inout [Command]) {
        state.withLock { state in
            swap(&state.commands, &buffer)
        }
    }

    /// Stops accepting commands and forgets the context, so no thread can call
    /// `lws_cancel_service` on it any more. Service thread, just before `lws_context_destroy`.
    ///
    /// - Returns: the commands that were never applied.
    func close() -> [Command] {
        let unapplied = state.withLock { state in
            state.context = nil
            state.phase = .closed
            defer { state.commands = [] }
            return state.commands
        }
        // Posters that took the context out before this are still inside lws_cancel_service
        // (a write(2)); none can start now. Let them finish before the context goes.
        while state.withLock({ $0.wakesInFlight }) > 0 { sched_yield() }
        return unapplied
    }

    /// Marks the context destroyed and resumes every `shutdownAndWait()` caller.
    func finish() {
        let waiters = state.withLock { state in
            state.context = nil
            state.phase = .stopped
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
