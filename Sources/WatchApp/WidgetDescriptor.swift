import WidgetKit

/// A widget kind: the `kind` string of a widget configuration, which `reloadTimelines(ofKind:)` names.
public struct WidgetKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind string.
    public var rawValue: String
    /// A kind named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// GitExplorer's only widget: the favorites.
    public static let favorites = WidgetKind(rawValue: "favorites")
}

/// Where a widget instance lives, which sets its default daily reload budget.
public enum WidgetPlacement: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A widget in the Smart Stack: 70 reloads per rolling 24 h by default.
    case smartStack
    /// A complication on the watch face, "always considered viewed": 75 by default.
    case watchFace

    public var description: String { rawValue }
}

/// One widget instance as the user placed it: WidgetKit budgets and configures each instance
/// on its own, even two of the same kind.
public struct WidgetDescriptor: Sendable, Hashable, Identifiable {
    /// Unique among the scheduler's widgets; stable across renders (e.g. `face.circular`).
    public var id: String
    /// The widget kind (`favorites`).
    public var kind: WidgetKind
    /// The family the user picked.
    public var family: WidgetFamily
    /// Face or Smart Stack.
    public var placement: WidgetPlacement
    /// The instance's configuration intent.
    public var configuration: SelectedUserIntent
    /// Overrides the placement's daily budget from ``WidgetRules`` when set.
    public var budgetLimit: Int?

    /// A widget instance description.
    public init(
        id: String, kind: WidgetKind = .favorites, family: WidgetFamily, placement: WidgetPlacement,
        configuration: SelectedUserIntent = SelectedUserIntent(), budgetLimit: Int? = nil
    ) {
        self.id = id
        self.kind = kind
        self.family = family
        self.placement = placement
        self.configuration = configuration
        self.budgetLimit = budgetLimit
    }

    /// A face complication of `family`, with id `face.<family>`.
    public static func face(_ family: WidgetFamily, configuration: SelectedUserIntent = .init()) -> WidgetDescriptor {
        WidgetDescriptor(
            id: "face.\(family.shortName)", family: family, placement: .watchFace, configuration: configuration)
    }

    /// A Smart Stack widget of `family`, with id `stack.<family>`.
    public static func smartStack(_ family: WidgetFamily, configuration: SelectedUserIntent = .init())
        -> WidgetDescriptor
    {
        WidgetDescriptor(
            id: "stack.\(family.shortName)", family: family, placement: .smartStack, configuration: configuration)
    }

    /// The headless watch's default setup: circular, corner and inline complications on the
    /// face, and a rectangular widget in the Smart Stack.
    public static let standard: [WidgetDescriptor] = [
        .face(.accessoryCircular), .face(.accessoryCorner), .face(.accessoryInline), .smartStack(.accessoryRectangular),
    ]
}
