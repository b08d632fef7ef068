/// What can go wrong when driving the watch model: bad input, reported as a value.
public enum WatchAppError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No widget has this id.
    case unknownWidget(String)
    /// A widget with this id is already placed.
    case duplicateWidget(String)

    public var description: String {
        switch self {
        case .unknownWidget(let id): "no widget with id '\(id)'"
        case .duplicateWidget(let id): "a widget with id '\(id)' is already placed"
        }
    }
}
