import Foundation
import WebSocketTransport

/// The send schedule of the fixed-rate scenarios, kept on a thread of its own.
///
/// Message `n` is due at `start + n / rate`. The thread sleeps to absolute deadlines
/// (`clock_nanosleep`), at least ``tick`` apart, and on each wake-up sends every message that is
/// due: one message per wake-up up to 4,000/s, two or three at 10,000/s. It used to be a task
/// (`Task.sleep`: a dispatch timer and a pool-thread wake-up each time) sharing the generator's
/// core with the consuming tasks.
enum BenchPacer {
    /// The shortest sleep between two wake-ups, in nanoseconds.
    ///
    /// One wake-up per message costs the generator's core two context switches per message (the
    /// pacer's and the lws service thread's, woken by the post) on top of the socket work: at
    /// 10,000/s the generator then used ~50 % of its core and fell behind whenever anything else
    /// ran there, sending the relay bursts. 250 µs cuts that to ~35 % and bunches at most three
    /// messages; 1 ms would cut it to ~30 % but bunch ten, which the relays would then queue.
    static let tick: UInt64 = 250_000

    /// Calls `send` with the indices due, in order, until `0..<total` went out at `rate` per
    /// second, from a dedicated thread; returns after the last call. A late wake-up sends what
    /// became due meanwhile at once (open loop: the schedule never slips).
    static func run(rate: Int, total: Int, send: @escaping @Sendable (Range<Int>) -> Void) async {
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                // Names the thread for perf and top (pthread_setname_np is not imported).
                try? "bench-pacer".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                let start = MonotonicClock.nanoseconds()
                let interval = 1e9 / Double(rate)
                var sent = 0
                while sent < total {
                    let now = MonotonicClock.nanoseconds()
                    let due = min(total, Int(Double(now - start) / interval) + 1)
                    if sent < due {
                        send(sent..<due)
                        sent = due
                    }
                    sleep(until: max(start + UInt64(Double(sent) * interval), now + tick))
                }
                finished.resume()
            }
            thread.start()
        }
    }

    /// Sleeps until `deadline` (``MonotonicClock`` nanoseconds); returns at once if it passed.
    private static func sleep(until deadline: UInt64) {
        var due = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
    }
}
