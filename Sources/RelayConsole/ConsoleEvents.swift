import RelayCore
import RelayProtocol
import WebSocketTransport

/// The console's server-sent events (`GET /console/api/events`): one stream per open page.
///
/// Events, each `event: NAME` and one `data:` line of JSON:
///
/// | event | data | sent |
/// |---|---|---|
/// | `state` | ``ConsoleJSON/State`` with `faces` empty | on connect and after every change |
/// | `faces` | `[ConsoleJSON.Face]` | on connect and when a watch publishes new faces |
/// | `frames` | ``ConsoleJSON/Frames``, newest first, only those not sent before | on connect (the last 100, perhaps none) and when frames went by |
///
/// Pushes are coalesced: at most one per ``ConsoleEvents/pushInterval`` (the engine asks
/// ``ConsoleHub/pushDelay(now:)`` at the end of each service-loop turn and arms its timer).
/// A stream that got nothing for ``ConsoleConfiguration/heartbeatMilliseconds`` (15 s) gets
/// a comment line (`:` and a blank line, which `EventSource` ignores): writing it is how a
/// stream whose page went away without a word is noticed and closed, so it no longer counts
/// towards ``ConsoleConfiguration/maxEventStreams``.
public enum ConsoleEvents {
    /// The shortest time between two pushes.
    public static let pushInterval: Int64 = 150
    /// What a heartbeat writes: an SSE comment.
    static let heartbeat = Array(":\n\n".utf8)
    /// Frames a new subscriber gets first.
    static let initialFrames = 100
    /// Frames per push at most (a busy relay's page shows the newest).
    static let framesPerPush = 200

    /// One open event stream and what it has seen.
    struct Subscriber: Sendable {
        let stream: HTTPStream
        /// Only this pair's frames (nil: all).
        let pair: PairID?
        /// The newest frame number it was sent.
        var lastFrame: Int
    }

    /// One event in the wire format: `event:` line, one `data:` line, blank line.
    static func event(_ name: String, _ json: [UInt8]) -> [UInt8] {
        Array("event: \(name)\ndata: ".utf8) + json + Array("\n\n".utf8)
    }

    /// The state event's JSON: the state without faces (they have their own event).
    static func stateEvent(_ s: ConsoleHub.State) -> [UInt8] {
        var state = ConsoleJSON.state(s)
        state.faces = []
        return event("state", ConsoleJSON.encode(state))
    }

    static func facesEvent(_ s: ConsoleHub.State) -> [UInt8] {
        event("faces", ConsoleJSON.encode(ConsoleJSON.faces(s)))
    }

    /// The frames `subscriber` has not seen (nil when none), and the newest number it now has.
    static func framesEvent(_ s: ConsoleHub.State, for subscriber: Subscriber, limit: Int) -> ([UInt8]?, Int) {
        let entries = s.log.entries(pair: subscriber.pair, after: subscriber.lastFrame, limit: limit)
        let newest = max(subscriber.lastFrame, s.log.newestNumber)
        guard !entries.isEmpty else { return (nil, newest) }
        return (event("frames", ConsoleJSON.encode(ConsoleJSON.frames(entries))), newest)
    }
}

extension ConsoleHub {
    /// Opens an event stream for a page: it gets the state, the faces and the last frames now,
    /// then every change (see ``ConsoleEvents``).
    ///
    /// - Returns: false, with nothing written, when ``ConsoleConfiguration/maxEventStreams``
    ///   streams are open already.
    public func subscribe(_ stream: HTTPStream, pair: PairID?) -> Bool {
        let first = state.withLock { s -> [UInt8]? in
            s.subscribers.removeAll { $0.stream.isClosed }
            guard s.subscribers.count < configuration.maxEventStreams else { return nil }
            var subscriber = ConsoleEvents.Subscriber(stream: stream, pair: pair, lastFrame: 0)
            var bytes = Array("retry: 1000\n\n".utf8) + ConsoleEvents.stateEvent(s) + ConsoleEvents.facesEvent(s)
            let (frames, newest) = ConsoleEvents.framesEvent(s, for: subscriber, limit: ConsoleEvents.initialFrames)
            // Even with none: the first `frames` is what replaces the rows a page kept from its
            // previous stream (another pair's, a restarted relay's).
            bytes += frames ?? ConsoleEvents.event("frames", ConsoleJSON.encode(ConsoleJSON.Frames(frames: [])))
            subscriber.lastFrame = newest
            s.subscribers.append(subscriber)
            return bytes
        }
        guard let first else { return false }
        stream.write(first)
        return true
    }

    /// Something the console shows changed (the engine says so after relay events).
    public func noteChange() {
        state.withLock { $0.changed = true }
    }

    /// Milliseconds until the next push is due: nil when nothing changed, 0 when due now.
    public func pushDelay(now: Timestamp) -> Int64? {
        state.withLock { s -> Int64? in
            guard s.changed else { return nil }
            return max(0, s.lastPushAt + ConsoleEvents.pushInterval - now.millisecondsSinceEpoch)
        }
    }

    /// Writes a heartbeat to every open stream when the streams got nothing for
    /// ``ConsoleConfiguration/heartbeatMilliseconds``, forgetting the closed ones then.
    ///
    /// - Returns: milliseconds until the next heartbeat is due (nil: no stream open, no timer).
    public func heartbeat(now: Timestamp) -> Int64? {
        let (streams, wait) = state.withLock { s -> ([HTTPStream], Int64?) in
            guard !s.subscribers.isEmpty else { return ([], nil) }
            let interval = configuration.heartbeatMilliseconds
            let due = max(s.lastPushAt, s.lastHeartbeatAt) + interval
            // Asked at the end of every service-loop turn: only a due beat walks the streams.
            guard due <= now.millisecondsSinceEpoch else { return ([], due - now.millisecondsSinceEpoch) }
            s.subscribers.removeAll { $0.stream.isClosed }
            guard !s.subscribers.isEmpty else { return ([], nil) }
            s.lastHeartbeatAt = now.millisecondsSinceEpoch
            return (s.subscribers.map(\.stream), interval)
        }
        for stream in streams { stream.write(ConsoleEvents.heartbeat) }
        return wait
    }

    /// Sends every open stream what changed since its last push; forgets closed streams.
    func push(_ s: inout State, at now: Timestamp) -> [(HTTPStream, [UInt8])] {
        s.changed = false
        s.lastPushAt = now.millisecondsSinceEpoch
        s.subscribers.removeAll { $0.stream.isClosed }
        guard !s.subscribers.isEmpty else {
            s.facesChanged = false
            return []
        }
        var common = ConsoleEvents.stateEvent(s)
        if s.facesChanged { common += ConsoleEvents.facesEvent(s) }
        s.facesChanged = false
        var out: [(HTTPStream, [UInt8])] = []
        for i in s.subscribers.indices {
            let (frames, newest) = ConsoleEvents.framesEvent(s, for: s.subscribers[i], limit: ConsoleEvents.framesPerPush)
            s.subscribers[i].lastFrame = newest
            out.append((s.subscribers[i].stream, common + (frames ?? [])))
        }
        return out
    }

    /// Open event streams (for tests and the logs).
    public var subscriberCount: Int {
        state.withLock { s in s.subscribers.count { !$0.stream.isClosed } }
    }
}
