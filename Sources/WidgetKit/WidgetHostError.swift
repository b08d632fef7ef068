import Foundation

/// A ``WidgetHost`` set-up call that was refused: it did nothing, and the host keeps it in
/// ``WidgetHost/setupErrors`` so a discarded return value is still visible.
public enum WidgetHostError: Error, Sendable, Hashable, CustomStringConvertible {
    /// ``WidgetHost/place(_:id:configuration:budget:)`` with an id already placed.
    case alreadyPlaced(id: String)
    /// ``WidgetHost/every(_:from:until:_:_:)`` with an interval that is not a finite
    /// number of seconds, at least a millisecond (the host's time grid).
    case badInterval(TimeInterval)

    public var description: String {
        switch self {
        case .alreadyPlaced(let id): "widget \(id) is already placed"
        case .badInterval(let interval): "every(\(interval)): the interval must be a finite number of seconds, at least 0.001"
        }
    }
}

/// Why ``WidgetHost/snapshot(_:isPreview:configuration:)`` has no entry.
public enum WidgetSnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The provider did not call its completion handler (or its `snapshot(for:in:)` did not
    /// return) within `timeout` seconds: the gallery would show the placeholder.
    case neverCompleted(family: WidgetFamily, timeout: TimeInterval)

    public var description: String {
        switch self {
        case .neverCompleted(let family, let timeout):
            "getSnapshot for \(family) did not call its completion handler within \(timeout) s"
        }
    }
}
