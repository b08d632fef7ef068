import Primitives

/// When a server pings its connections and hangs up on silent ones (PROTOCOL.md §2.2): a ping
/// once nothing has arrived for `pingAfter`, a hang-up once nothing (not even a pong) has for
/// `hangupAfter`. Pure value type: no sockets, no clock; times are monotonic nanoseconds.
///
/// lws 4.1 can do this itself (a context's retry policy), but it keeps every connection's
/// timer in one list sorted by a linear walk, and re-sorts it on each proof of life: at 5,000
/// pairs those walks were 19 % of the relay's CPU (`perf record`, BENCHMARKS.md). Here a
/// connection costs nothing per message (its owner stores the time it last heard from it) and
/// one heap entry, looked at about once per `pingAfter`: the entry says when the connection
/// is due at the earliest, and only then is its last-heard time read.
struct KeepaliveSchedule: Sendable {
    enum Action: Sendable, Equatable {
        /// Send a ping: nothing came for `pingAfter`.
        case ping(ConnectionID)
        /// Close without a close handshake: nothing came for `hangupAfter`, not even a pong.
        case hangUp(ConnectionID)
    }

    let pingAfter: UInt64
    let hangupAfter: UInt64

    private struct Check: Sendable, Comparable {
        var at: UInt64
        var id: ConnectionID

        /// Earlier first; at the same time, the connection opened first.
        static func < (a: Check, b: Check) -> Bool { a.at != b.at ? a.at < b.at : a.id < b.id }
    }

    /// One entry per open connection (a closed one's goes when due).
    private var heap = MinHeap<Check>()
    /// Connections pinged, with the last-heard time they had then (heard since: not pinged).
    private var pinged: [ConnectionID: UInt64] = [:]

    /// - Precondition: `0 < pingAfter < hangupAfter`.
    init(pingAfter: UInt64, hangupAfter: UInt64) {
        precondition(pingAfter > 0 && pingAfter < hangupAfter, "keepalive: 0 < ping < hang-up")
        self.pingAfter = pingAfter
        self.hangupAfter = hangupAfter
    }

    /// When the next connection is due to be looked at, if any is open.
    var nextCheck: UInt64? { heap.first?.at }

    /// Connections with an entry (open ones, and closed ones whose entry is not due yet).
    var count: Int { heap.count }

    /// Connection `id` opened at `now` (which counts as hearing from it).
    mutating func opened(_ id: ConnectionID, now: UInt64) {
        heap.insert(Check(at: now &+ pingAfter, id: id))
    }

    /// The pings and hang-ups due at `now`, looking at no more than `limit` connections (the
    /// rest stay due: call again at once). `lastHeard` gives an open connection's last-heard
    /// time, nil for a closed one.
    mutating func due(now: UInt64, limit: Int = .max, lastHeard: (ConnectionID) -> UInt64?) -> [Action] {
        var actions: [Action] = []
        var looked = 0
        while looked < limit, let top = heap.first, top.at <= now {
            looked += 1
            var check = heap.removeFirst()
            guard let heard = lastHeard(check.id) else {
                pinged[check.id] = nil
                continue
            }
            let silent = now > heard ? now - heard : 0
            if silent >= hangupAfter {
                pinged[check.id] = nil
                actions.append(.hangUp(check.id))
                continue
            }
            if silent >= pingAfter {
                if pinged[check.id] != heard {
                    pinged[check.id] = heard
                    actions.append(.ping(check.id))
                }
                // The hang-up, or sooner if a pong may come before it and need its next ping
                // `pingAfter` later (only when `hangupAfter` is more than twice `pingAfter`).
                check.at = min(heard &+ hangupAfter, now &+ pingAfter)
            } else {
                pinged[check.id] = nil
                check.at = heard &+ pingAfter
            }
            heap.insert(check)
        }
        return actions
    }
}
