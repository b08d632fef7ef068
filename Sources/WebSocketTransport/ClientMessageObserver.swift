#if canImport(Glibc)
    import Glibc
#endif

/// Watches one client connection's messages from its service thread, with timestamps taken there.
///
/// Attach one with ``ClientConnection/observe(_:)``. A latency benchmark needs the moment a
/// message went to the socket and the moment a reply was complete, not when a Swift task got
/// round to it: the hand-off from the service thread to a task (and a task's wake-up on a busy
/// core) is the tester's own delay. Connections without an observer read no clock.
///
/// - Important: both methods run on the context's service thread and hold it up: keep them
///   short and non-blocking. They must be thread-safe, since whatever they record is read
///   elsewhere.
public protocol ClientMessageObserver: Sendable {
    /// The first frame of an outbound message was handed to `lws_write`.
    ///
    /// - Parameters:
    ///   - payload: the whole message, as given to ``ClientConnection/send(_:)`` or
    ///     ``ClientConnection/sendBinary(_:)``.
    ///   - stamp: ``MonotonicClock/nanoseconds()`` read just before the `lws_write` call.
    func wrote(_ payload: [UInt8], at stamp: UInt64)

    /// An inbound message is complete; called before its event is yielded to
    /// ``ClientConnection/events``.
    ///
    /// - Parameters:
    ///   - event: the `.message`, `.binary` or `.tooLarge` event the stream will carry.
    ///   - stamp: ``MonotonicClock/nanoseconds()`` read as the message's last chunk was reassembled.
    func received(_ event: ClientEvent, at stamp: UInt64)
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of ``ClientMessageObserver`` stamps.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (boot); never goes backwards.
    public static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
