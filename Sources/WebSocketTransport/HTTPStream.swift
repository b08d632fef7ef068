import Primitives

/// The body of a streaming plain-HTTP response (server-sent events): it has no length, stays
/// open while the client reads, and carries whatever the producer writes.
///
/// Any thread may ``write(_:)``; the bytes wait here until the lws service thread can send
/// them (it is woken through the server's command inbox, never by an lws call from the
/// producer's thread). The stream is closed when the client goes away (lws notices that at the
/// latest on the next write, so a silent stream may look open until then), when the server stops,
/// when the producer calls ``close()``, or when more than ``maxPending`` bytes wait (a client
/// that stopped reading); writes after that are refused.
public final class HTTPStream: Sendable, Equatable {
    private struct State {
        /// Taken from the front in chunks: a FIFO, so draining a large backlog copies each
        /// byte once (`removeFirst` on an array copied the rest of it for every chunk).
        var pending = FIFOArray<UInt8>()
        var closed = false
        /// Set by the service thread once the headers are out: wakes it for new bytes.
        var wake: (@Sendable () -> Void)?
    }

    /// Most bytes that may wait for a slow client before the stream is closed.
    public let maxPending: Int
    private let state = LockedState(State())

    /// A stream that closes itself when more than `maxPending` bytes wait.
    public init(maxPending: Int = 4 << 20) {
        self.maxPending = maxPending
    }

    /// Queues `bytes` for the client.
    ///
    /// - Returns: false, with nothing queued, once the stream is closed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        let (accepted, wake) = state.withLock { s -> (Bool, (@Sendable () -> Void)?) in
            guard !s.closed else { return (false, nil) }
            let wasEmpty = s.pending.isEmpty
            s.pending.append(contentsOf: bytes)
            if s.pending.count > maxPending {
                s.closed = true
                s.pending = FIFOArray()
                return (false, s.wake)
            }
            return (true, wasEmpty ? s.wake : nil)
        }
        wake?()
        return accepted
    }

    /// Ends the stream: the server closes the connection (the client may reconnect).
    public func close() {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            guard !s.closed else { return nil }
            s.closed = true
            return s.wake
        }
        wake?()
    }

    /// Whether the stream is closed (by the client, the server or ``close()``).
    public var isClosed: Bool {
        state.withLock { $0.closed }
    }

    public static func == (a: HTTPStream, b: HTTPStream) -> Bool { a === b }

    // MARK: - The service thread's side

    /// Starts waking the service thread with `wake` (after the headers were written).
    func attach(wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// Takes up to `limit` waiting bytes; `closed` once the stream is closed (nothing more to send).
    func take(upTo limit: Int) -> (bytes: [UInt8], closed: Bool) {
        state.withLock { s in
            guard !s.closed else { return ([], true) }
            let bytes = s.pending.prefixArray(limit)
            s.pending.removeFirst(bytes.count)
            return (bytes, false)
        }
    }

    /// Whether bytes wait (checked after a write, to ask for the next WRITEABLE).
    var hasPending: Bool {
        state.withLock { !$0.pending.isEmpty }
    }

    /// The connection is gone: refuse further writes, drop what waits, stop waking.
    func markClosed() {
        state.withLock {
            $0.closed = true
            $0.pending = FIFOArray()
            $0.wake = nil
        }
    }
}
