/// What can go wrong when driving the watch model: bad input, reported as a value.
public enum WatchAppError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No widget has this id.
    case unknownWidget(String)
    /// A widget with this id is already placed.
    case duplicateWidget(String)
    /// A delete of a login the watch does not list (`favorites`: the ones it does).
    case notAFavorite(String, favorites: [String])

    /// The machine protocol's error code (Simulator/README.md).
    public var code: String {
        switch self {
        case .unknownWidget, .duplicateWidget: "invalid_widget"
        case .notAFavorite: "not_a_favorite"
        }
    }

    public var description: String {
        switch self {
        case .unknownWidget(let id): "no widget with id '\(id)'"
        case .duplicateWidget(let id): "a widget with id '\(id)' is already placed"
        case .notAFavorite(let login, let favorites):
            "\(login) is not a favorite (\(favorites.isEmpty ? "none yet" : favorites.joined(separator: ", ")))"
        }
    }
}
