// AppIntents' enumerations for intent parameters: a widget configuration's choice among fixed
// cases (`@Parameter(title: "Color") var color: ColorChoice`).

/// How a value shows on the configuration screen (AppIntents' `DisplayRepresentation`).
public struct DisplayRepresentation: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The title of the value.
    public let title: LocalizedStringResource
    /// A second line, if any.
    public let subtitle: LocalizedStringResource?

    /// A representation titled `title`, with an optional `subtitle`.
    public init(title: LocalizedStringResource, subtitle: LocalizedStringResource? = nil) {
        self.title = title
        self.subtitle = subtitle
    }

    /// A representation titled by the literal.
    public init(stringLiteral value: String) {
        self.init(title: LocalizedStringResource(value))
    }
}

/// How a type is named on the configuration screen (AppIntents' `TypeDisplayRepresentation`).
public struct TypeDisplayRepresentation: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The type's name.
    public let name: LocalizedStringResource
    /// Its plural, if any.
    public let numericFormat: LocalizedStringResource?

    /// A type named `name`.
    public init(name: LocalizedStringResource, numericFormat: LocalizedStringResource? = nil) {
        self.name = name
        self.numericFormat = numericFormat
    }

    /// A type named by the literal.
    public init(stringLiteral value: String) {
        self.init(name: LocalizedStringResource(value))
    }
}

/// A fixed set of values a parameter may take (AppIntents' `AppEnum`): a `String`-backed,
/// `CaseIterable` enum with a name for the type and a title for each case.
///
/// Write the two requirements computed (`static var typeDisplayRepresentation:
/// TypeDisplayRepresentation { "Color" }`): Swift 6 rejects a mutable stored `static var`.
public protocol AppEnum: CaseIterable, RawRepresentable, Hashable, Sendable
where RawValue: LosslessStringConvertible {
    /// The type's name on the configuration screen.
    static var typeDisplayRepresentation: TypeDisplayRepresentation { get }
    /// Each case's title.
    static var caseDisplayRepresentations: [Self: DisplayRepresentation] { get }
}

extension AppEnum {
    /// This case's title (its raw value when it has none).
    public var localizedStringResource: LocalizedStringResource {
        Self.caseDisplayRepresentations[self]?.title ?? LocalizedStringResource(String(describing: rawValue))
    }
}
