import CThreadSanitizer
import Synchronization

/// A `Mutex`-protected value whose critical sections ThreadSanitizer can see.
///
/// On Linux, `Synchronization.Mutex` locks with raw futex calls inside the (uninstrumented)
/// standard library, so a `-sanitize=thread` build reports races on state the mutex does
/// protect. Each critical section here is also announced to TSan through `relay_tsan_acquire`
/// / `relay_tsan_release` (see `shim.h`), which do nothing outside TSan builds. The locking
/// itself is plain `Mutex`: one uncontended lock per call, no allocation. Use it instead of
/// `Mutex` wherever the suite runs under TSan (all of WatchRelay's shared state).
public final class LockedState<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// A lock around `value`.
    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try mutex.withLock { (value) throws(Failure) -> Result in
            // The token is only an address TSan uses to name this lock; nothing is dereferenced.
            let token = Unmanaged.passUnretained(self).toOpaque()
            relay_tsan_acquire(token)
            defer { relay_tsan_release(token) }
            return try body(&value)
        }
    }
}
