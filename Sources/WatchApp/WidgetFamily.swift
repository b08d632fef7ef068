/// The watchOS accessory families the `favorites` widget supports, with their text-fit rules.
///
/// The rules are close to Apple's (see `notes/watchconnectivity-widgetkit.md` B.5) and are
/// enforced by ``WidgetContent``:
/// - ``accessoryCircular``: a small round slot. A number (the count of favorites, `99+`
///   past 99, at most ``valueColumns`` columns) over a short caption (`FAV`).
/// - ``accessoryRectangular``: the largest slot; up to ``maxLines`` lines of at most
///   ``lineColumns`` columns: the login (headline), the name if any, and
///   `repos · followers`.
/// - ``accessoryInline``: one short line of at most ``lineColumns`` (20) columns, truncated
///   with `…`; a `★` stands in for the optional image.
/// - ``accessoryCorner``: a gauge text in the corner (at most ``valueColumns`` columns: the
///   user's repo count), a gauge (the user's position among the favorites) and a curved
///   label on the inside edge (the login, at most ``labelColumns`` columns).
public enum WidgetFamily: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A round complication: shows the number of favorites.
    case accessoryCircular
    /// The largest accessory (face or Smart Stack): shows one user.
    case accessoryRectangular
    /// A single row of text on the face: one user, one short line.
    case accessoryInline
    /// A face corner (watchOS only): gauge text plus a curved label.
    case accessoryCorner

    public var description: String { rawValue }

    /// The short name used in frames and ids (`circular`, `rectangular`, `inline`, `corner`).
    public var shortName: String {
        switch self {
        case .accessoryCircular: "circular"
        case .accessoryRectangular: "rectangular"
        case .accessoryInline: "inline"
        case .accessoryCorner: "corner"
        }
    }

    /// The most lines of main text the family shows.
    public var maxLines: Int {
        switch self {
        case .accessoryRectangular: 3
        case .accessoryCircular, .accessoryInline, .accessoryCorner: 1
        }
    }

    /// The widest a main-text line may be, in columns.
    public var lineColumns: Int {
        switch self {
        case .accessoryCircular: Self.valueColumns
        case .accessoryRectangular: 24
        case .accessoryInline: 20
        case .accessoryCorner: Self.valueColumns
        }
    }

    /// The widest a label (circular caption, corner curved label) may be, in columns.
    public var labelColumns: Int {
        switch self {
        case .accessoryCircular: 4
        case .accessoryCorner: 10
        case .accessoryRectangular, .accessoryInline: 0
        }
    }

    /// The widest a circular number or corner gauge text may be, in columns.
    public static let valueColumns = 4

    /// Whether the family shows one user (and so rotates and honours the configuration intent).
    public var showsUser: Bool { self != .accessoryCircular }
}
