import Foundation

/// Values that define the widget's size and shape (WidgetKit's `WidgetFamily`), with Apple's
/// case names: the Home Screen (system) families and the accessory families of the watch face,
/// the Smart Stack and the Lock Screen.
public enum WidgetFamily: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// A small Home Screen widget.
    case systemSmall
    /// A medium Home Screen widget.
    case systemMedium
    /// A large Home Screen widget.
    case systemLarge
    /// An extra-large widget (iPad, visionOS).
    case systemExtraLarge
    /// A round complication or Lock Screen widget.
    case accessoryCircular
    /// The largest accessory: a face complication, the Smart Stack, the Lock Screen.
    case accessoryRectangular
    /// One row of text and an optional image.
    case accessoryInline
    /// A watch face corner (watchOS only): a main view and a curved label.
    case accessoryCorner

    public var description: String { rawValue }

    /// The accessory families: the ones a watch shows.
    public static let accessoryFamilies: [WidgetFamily] = [
        .accessoryCircular, .accessoryRectangular, .accessoryInline, .accessoryCorner,
    ]

    /// Whether this is a watch face / Smart Stack / Lock Screen family.
    public var isAccessory: Bool { Self.accessoryFamilies.contains(self) }

    /// A typical size in points (45 mm watch for the accessories, a 6.1" iPhone for the
    /// system families); what ``TimelineProviderContext/displaySize`` is unless a host sets it.
    public var defaultDisplaySize: CGSize {
        switch self {
        case .systemSmall: CGSize(width: 170, height: 170)
        case .systemMedium: CGSize(width: 364, height: 170)
        case .systemLarge: CGSize(width: 364, height: 382)
        case .systemExtraLarge: CGSize(width: 715, height: 338)
        case .accessoryCircular: CGSize(width: 50, height: 50)
        case .accessoryRectangular: CGSize(width: 174, height: 58)
        case .accessoryInline: CGSize(width: 184, height: 20)
        case .accessoryCorner: CGSize(width: 42, height: 42)
        }
    }
}
