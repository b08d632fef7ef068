import Foundation

/// What the watch app and its widget extension share (on a watch: an App Group's
/// `UserDefaults(suiteName:)`). The app writes what the phone sent; the widget's provider reads it.
///
/// `@unchecked Sendable`: every stored property is behind `lock`.
public final class WorkoutStore: @unchecked Sendable {
    private let lock = NSLock()
    private var _minutes = 0
    private var _goal = 30
    private var _history: [String] = []

    public init() {}

    /// Today's active minutes.
    public var minutes: Int { lock.withLock { _minutes } }
    /// Today's goal in minutes.
    public var goal: Int { lock.withLock { _goal } }
    /// Workouts the phone queued, in the order received.
    public var history: [String] { lock.withLock { _history } }

    public func save(minutes: Int, goal: Int? = nil) {
        lock.withLock {
            _minutes = minutes
            if let goal { _goal = goal }
        }
    }

    public func append(workout: String) {
        lock.withLock { _history.append(workout) }
    }
}

/// What a delegate was told, in order: each app's log for its screen (and the tests).
///
/// `@unchecked Sendable`: the entries are behind `lock`.
public final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    public init() {}

    /// The entries so far.
    public var all: [String] { lock.withLock { entries } }

    public func note(_ entry: String) {
        lock.withLock { entries.append(entry) }
    }
}
