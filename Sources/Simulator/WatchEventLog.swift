import Foundation
import WatchApp

/// Every event a simulated watch published during a run, across its restarts, with a
/// cursor for `wait` steps and a mark for `expectReloads` steps.
///
/// `wait` looks for the next matching events after the cursor and moves the cursor past
/// them; `mark` remembers where the log is so that reloads can be counted "since the mark".
actor WatchEventLog {
    private(set) var events: [WatchEvent] = []
    private var cursor = 0
    private var markIndex = 0

    /// Appends the events of `stream` until it finishes (one call per watch incarnation).
    func pump(_ stream: AsyncStream<WatchEvent>) async {
        for await event in stream { events.append(event) }
    }

    /// Moves the cursor and the mark to the end of the log.
    func markNow() {
        cursor = events.count
        markIndex = events.count
    }

    /// The events since the last mark.
    func sinceMark() -> [WatchEvent] {
        Array(events[min(markIndex, events.count)...])
    }

    /// Waits until `count` events after the cursor match `pick`; moves the cursor past the
    /// last one and returns them, or returns what it found by the deadline (fewer).
    func waitFor(
        _ count: Int, timeout: Double, _ pick: @Sendable (WatchEvent) -> Bool
    ) async -> (found: [WatchEvent], seen: [WatchEvent]) {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            var found: [WatchEvent] = []
            var end = cursor
            for i in cursor..<events.count where found.count < count && pick(events[i]) {
                found.append(events[i])
                end = i + 1
            }
            if found.count >= count {
                cursor = end
                return (found, [])
            }
            if ContinuousClock.now >= deadline {
                return (found, Array(events[cursor...].suffix(8)))
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

extension WatchEvent {
    /// A short line for failure messages.
    var summary: String {
        switch self {
        case .activated(let paired): "activated(paired: \(paired))"
        case .paired(let peer): "paired(\(peer))"
        case .reachability(let r): r ? "reachable" : "unreachable"
        case .snapshotStored(let revision, let logins): "snapshot(\(revision): \(logins.joined(separator: ",")))"
        case .deleteAccepted(let login): "deleteAccepted(\(login))"
        case .deleteCompleted(let login): "deleteCompleted(\(login))"
        case .profile(let p): "profile(\(p.login): \(p.phase.name))"
        case .widget(let w):
            switch w {
            case .reloaded(let r): "reload(\(r.widgetID): \(r.reasons.map(\.rawValue).joined(separator: ",")))"
            case .stale(let s): "stale(\(s.widgetID))"
            case .rendered(let e): "rendered(\(e.widgetID))"
            }
        case .error(let e): "error(\(e))"
        }
    }
}
