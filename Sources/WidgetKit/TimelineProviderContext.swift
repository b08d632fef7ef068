import Foundation

/// What a timeline provider is asked about (WidgetKit's `TimelineProviderContext`): the
/// family and size of the widget, and whether it shows in the gallery.
public struct TimelineProviderContext: Sendable, Hashable {
    /// The widget's family.
    public let family: WidgetFamily
    /// True in the widget gallery: answer fast, with sample data if the real data is slow.
    public let isPreview: Bool
    /// The widget's size in points.
    public let displaySize: CGSize

    /// A context for `family` (size: the family's ``WidgetFamily/defaultDisplaySize`` unless given).
    public init(family: WidgetFamily, isPreview: Bool = false, displaySize: CGSize? = nil) {
        self.family = family
        self.isPreview = isPreview
        self.displaySize = displaySize ?? family.defaultDisplaySize
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.family == b.family && a.isPreview == b.isPreview && a.displaySize == b.displaySize
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(isPreview)
        hasher.combine(displaySize.width)
        hasher.combine(displaySize.height)
    }
}
