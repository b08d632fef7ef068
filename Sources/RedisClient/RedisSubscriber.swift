import CHiredis
import Foundation
import Primitives

/// What a ``RedisSubscriber`` reports, in order, on its own thread.
public enum RedisSubscriberEvent: Sendable, Hashable {
    /// Redis confirmed the subscription to every channel (after each connect): messages
    /// published from now on arrive.
    case subscribed
    /// A message published to `channel`. Redis keeps the order of one publishing connection.
    case message(channel: String, payload: [UInt8])
    /// The subscription ended (the connection broke or could not be made). Messages published
    /// until the next ``subscribed`` are not seen: Redis pub/sub keeps nothing for absent
    /// subscribers. Reported once per outage.
    case disconnected(RedisError)
}

/// A subscription to Redis pub/sub channels on a hiredis connection and a thread of its own.
///
/// A connection in subscribe mode can do nothing else, so it is not a ``RedisClient``'s. The
/// thread blocks in the read (no timeout: a subscriber waits for messages) and hands every event
/// to `handler` on that thread; the handler must be quick and must not block (the relay posts
/// to the lws service thread). When the connection breaks (redis-server died) the subscriber
/// reports ``RedisSubscriberEvent/disconnected(_:)`` and tries again every `retryMilliseconds`
/// until it is subscribed again. ``close()`` ends a blocking read by shutting the socket down.
public final class RedisSubscriber: Sendable {
    private let core: SubscriberThread

    /// Starts the thread; it connects and subscribes at once.
    public init(
        endpoint: RedisEndpoint, channels: [String], timeoutMilliseconds: Int = 2000, retryMilliseconds: Int = 200,
        handler: @escaping @Sendable (RedisSubscriberEvent) -> Void
    ) {
        precondition(!channels.isEmpty, "a subscriber needs a channel")
        core = SubscriberThread(
            endpoint: endpoint, channels: channels, timeoutMilliseconds: timeoutMilliseconds,
            retryMilliseconds: retryMilliseconds, handler: handler)
    }

    deinit { core.requestStop() }

    /// Unsubscribes (closes the connection) and ends the thread; returns once it ended. No event
    /// is reported after this returns.
    public func close() async {
        await withCheckedContinuation { continuation in
            core.requestStop { continuation.resume() }
        }
    }
}

/// The subscriber's thread and what it shares with ``RedisSubscriber/close()``.
private final class SubscriberThread: @unchecked Sendable {
    // @unchecked Sendable: `stopping`, `descriptor`, `exitWaiters` and `hasExited` are only
    // touched with `condition` held (NSCondition, a pthread mutex ThreadSanitizer sees); the
    // connection lives on the thread's stack alone.
    private let condition = NSCondition()
    private var stopping = false
    private var descriptor: Int32 = -1
    private var exitWaiters: [@Sendable () -> Void] = []
    private var hasExited = false
    private let endpoint: RedisEndpoint
    private let channels: [String]
    private let timeoutMilliseconds: Int
    private let retryMilliseconds: Int
    private let handler: @Sendable (RedisSubscriberEvent) -> Void

    init(
        endpoint: RedisEndpoint, channels: [String], timeoutMilliseconds: Int, retryMilliseconds: Int,
        handler: @escaping @Sendable (RedisSubscriberEvent) -> Void
    ) {
        self.endpoint = endpoint
        self.channels = channels
        self.timeoutMilliseconds = timeoutMilliseconds
        self.retryMilliseconds = retryMilliseconds
        self.handler = handler
        let thread = Thread.named("redis-subscribe") { [self] in run() }
        thread.start()
    }

    /// Stops the thread (interrupting its read); `exited` runs once it ended.
    func requestStop(_ exited: @escaping @Sendable () -> Void = {}) {
        condition.lock()
        stopping = true
        if hasExited {
            condition.unlock()
            return exited()
        }
        exitWaiters.append(exited)
        relay_redis_shutdown_fd(descriptor)
        condition.signal()
        condition.unlock()
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    private func run() {
        // Whether the last report was `subscribed` (or nothing yet): outages are reported once.
        var healthy = true
        while !isStopping {
            switch subscribeAndRead() {
            case .stopped: break
            case .failedBeforeSubscribing(let error):
                if healthy { handler(.disconnected(error)) }
                healthy = false
            case .lostAfterSubscribing:
                healthy = false
            }
            pause()
        }
        condition.lock()
        hasExited = true
        let waiters = exitWaiters
        exitWaiters = []
        condition.unlock()
        for waiter in waiters { waiter() }
    }

    /// How one connection ended.
    private enum Outcome {
        case stopped
        /// Connecting or subscribing failed (nothing reported yet).
        case failedBeforeSubscribing(RedisError)
        /// The subscription was reported and then its loss.
        case lostAfterSubscribing
    }

    /// Connects, subscribes, and reports messages until the connection breaks or is stopped.
    private func subscribeAndRead() -> Outcome {
        let connection: RedisConnection
        do {
            connection = try RedisConnection(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            return .failedBeforeSubscribing(error)
        }
        condition.lock()
        if stopping {
            condition.unlock()
            return .stopped
        }
        descriptor = connection.descriptor
        condition.unlock()
        defer {
            condition.lock()
            descriptor = -1
            condition.unlock()
        }
        connection.append(RedisCommand(["SUBSCRIBE"] + channels))
        for _ in channels {
            switch connection.nextReply() {
            case .failure(let error): return isStopping ? .stopped : .failedBeforeSubscribing(error)
            case .success(let reply):
                guard reply.elements?.first?.text == "subscribe" else {
                    return .failedBeforeSubscribing(.protocolError("SUBSCRIBE answered \(reply)"))
                }
            }
        }
        connection.setTimeout(milliseconds: 0)
        handler(.subscribed)
        while true {
            switch connection.nextReply() {
            case .failure(let error):
                if isStopping { return .stopped }
                handler(.disconnected(error))
                return .lostAfterSubscribing
            case .success(let reply):
                guard let parts = reply.elements, parts.count == 3, parts[0].text == "message",
                    let channel = parts[1].text, case .bulk(let payload) = parts[2]
                else { continue }
                handler(.message(channel: channel, payload: payload))
            }
        }
    }

    /// Waits `retryMilliseconds`, or less if stopped meanwhile.
    private func pause() {
        condition.lock()
        if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(retryMilliseconds) / 1000)) }
        condition.unlock()
    }
}
