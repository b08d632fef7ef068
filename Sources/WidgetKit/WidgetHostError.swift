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
