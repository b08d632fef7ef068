import Foundation
import WebSocketTransport

/// The send schedule of the fixed-rate scenarios, kept on a thread of its own.
///
/// Message `n` goes out at `start + n / rate`, each after its own absolute-deadline sleep: an
/// open-loop schedule that no Swift task wake-up can bunch up. It used to be a task sleeping at
/// least 200 µs between bursts (`Task.sleep`, a dispatch timer and a pool thread per wake-up),
/// so at 10,000/s messages left in pairs and a late wake-up sent a burst.
enum BenchPacer {
    /// Calls `send(n)` for `n` in `0..<total` at `rate` per second from a dedicated thread;
    /// returns when the last call returned. A late thread catches up at once (open loop).
    static func run(rate: Int, total: Int, send: @escaping @Sendable (Int) -> Void) async {
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                let start = MonotonicClock.nanoseconds()
                let interval = 1e9 / Double(rate)
                for index in 0..<total {
                    sleep(until: start + UInt64(Double(index) * interval))
                    send(index)
                }
                finished.resume()
            }
            thread.name = "bench-pacer"
            thread.start()
        }
    }

    /// Sleeps until `deadline` (``MonotonicClock`` nanoseconds); returns at once if it passed.
    private static func sleep(until deadline: UInt64) {
        var due = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
    }
}
