import Dispatch
import Foundation

/// Signals handled by a closure instead of their default action, installed so that none is
/// lost: ``install(_:handler:)`` returns only once the kernel delivers every one of them to
/// its dispatch source.
///
/// The order matters. A signal's default action (ending the process) must be disabled with
/// `SIG_IGN` before libdispatch watches it, and an ignored signal that arrives before the source
/// is registered is dropped. A command that prints "ready" (or its URL) between the two, and a
/// script that sends SIGTERM as soon as it reads that line, loses the signal and waits forever;
/// a loaded machine made that window wide enough to hit. Install first, announce after.
///
/// One set of handlers per signal in a process: with two installed for the same signal, a
/// delivery is not reliably seen by both (a second handler in `demo` swallowed Ctrl-C), so a
/// command whose phases want different reactions installs once and switches inside its handler.
public final class SignalHandlers: @unchecked Sendable {
    // @unchecked: Dispatch's source protocols are not marked Sendable. This immutable array is
    // never used after init; it only keeps the sources alive, for their handlers to run.
    private let sources: [any DispatchSourceSignal]

    private init(sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    /// Disables the default action of each of `numbers` and runs `handler` with the signal's
    /// number each time one arrives, one call at a time (a serial queue: two signals at once do
    /// not run two handlers that both call `exit`). Returns after every source is registered: a
    /// signal sent after the return reaches `handler`.
    ///
    /// SIGHUP that the parent set to be ignored stays ignored: `nohup watchrelay serve` must
    /// outlive its terminal. (SIGINT and SIGTERM are taken even then: a script's `cmd &` ignores
    /// SIGINT in the child, and `kill -INT` of it used to stop it cleanly.)
    public static func install(
        _ numbers: [Int32], handler: @escaping @Sendable (Int32) -> Void
    ) async -> SignalHandlers {
        let numbers = numbers.filter { $0 != SIGHUP || !isIgnored($0) }
        let queue = DispatchQueue(label: "signal-handlers")
        let (registered, registration) = AsyncStream.makeStream(of: Void.self)
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setRegistrationHandler { registration.yield() }
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
        var count = 0
        for await _ in registered {
            count += 1
            if count == numbers.count { break }
        }
        return SignalHandlers(sources: sources)
    }

    /// Whether `number`'s disposition is SIG_IGN now (as the parent left it).
    static func isIgnored(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0 else { return false }
        // Handlers are C function pointers (not Equatable): compared by address; SIG_IGN is 1.
        guard let handler = current.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}

/// SIGINT, SIGTERM and SIGHUP (the terminal went away) as an end-of-run event, so a command
/// shuts down cleanly on each: ``install()`` before the command announces that
/// it is ready, ``wait()`` where it serves until told to stop.
public final class TerminationSignal: Sendable {
    private let received: AsyncStream<Int32>
    private let handlers: SignalHandlers

    private init(received: AsyncStream<Int32>, handlers: SignalHandlers) {
        self.received = received
        self.handlers = handlers
    }

    /// Takes SIGINT, SIGTERM and SIGHUP from their default action (SIGHUP not when ignored:
    /// ``SignalHandlers/install(_:handler:)``). Returns once a signal sent after it is sure to
    /// end ``wait()``, even one sent before anyone waits. A second signal ends the process at
    /// once with 128 + its number: a shutdown that hangs can still be interrupted.
    public static func install() async -> TerminationSignal {
        let (received, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingOldest(1))
        let seen = LockedState(0)
        let handlers = await SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
            let count = seen.withLock { count in
                count += 1
                return count
            }
            if count > 1 { _exit(128 + number) }
            continuation.yield(number)
        }
        return TerminationSignal(received: received, handlers: handlers)
    }

    /// Returns after SIGINT, SIGTERM or SIGHUP (at once if one came since ``install()``), or when the
    /// calling task is cancelled. Meant for one waiter.
    public func wait() async {
        for await _ in received { break }
    }
}
