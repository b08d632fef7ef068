import WidgetKit

/// The watchOS accessory families (WidgetKit's ``WidgetFamily``) the `favorites` widget
/// supports, with their text-fit rules.
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
extension WidgetFamily {
    /// The families the `favorites` widget supports (`supportedFamilies`), in the order the
    /// JSON renderer lists them.
    public static let favoritesFamilies: [WidgetFamily] = accessoryFamilies

    /// The accessory family whose layout the `favorites` widget uses for this family: itself,
    /// or the rectangular layout for a Home Screen family (which the widget does not support).
    public var favoritesLayout: WidgetFamily { isAccessory ? self : .accessoryRectangular }

    /// The short name used in frames and ids (`circular`, `rectangular`, `inline`, `corner`).
    public var shortName: String {
        switch self {
        case .accessoryCircular: "circular"
        case .accessoryRectangular: "rectangular"
        case .accessoryInline: "inline"
        case .accessoryCorner: "corner"
        case .systemSmall: "small"
        case .systemMedium: "medium"
        case .systemLarge: "large"
        case .systemExtraLarge: "extraLarge"
        }
    }

    /// The most lines of main text the family shows.
    public var maxLines: Int {
        switch self {
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge: 3
        case .accessoryCircular, .accessoryInline, .accessoryCorner: 1
        }
    }

    /// The widest a main-text line may be, in columns.
    public var lineColumns: Int {
        switch self {
        case .accessoryCircular: Self.valueColumns
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge: 24
        case .accessoryInline: 20
        case .accessoryCorner: Self.valueColumns
        }
    }

    /// The widest a label (circular caption, corner curved label) may be, in columns.
    public var labelColumns: Int {
        switch self {
        case .accessoryCircular: 4
        case .accessoryCorner: 10
        case .accessoryRectangular, .accessoryInline, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge: 0
        }
    }

    /// The widest a circular number or corner gauge text may be, in columns.
    public static let valueColumns = 4

    /// Whether the family shows one user (and so rotates and honours the configuration intent).
    public var showsUser: Bool { self != .accessoryCircular }
}
