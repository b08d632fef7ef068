// AppIntents' string, description and intent types, as far as widget configuration intents use
// them. Linux only (see Package.swift): on Apple platforms the real AppIntents is there.

/// A string an intent shows the user (AppIntents' `LocalizedStringResource`).
///
/// Here no localization happens: the resource is its key, which is also its text.
public struct LocalizedStringResource: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The key, which is the text (there are no string tables here).
    public let key: String

    /// The resource whose key and text is `key`.
    public init(_ key: String) {
        self.key = key
    }

    /// The resource whose key and text is the literal.
    public init(stringLiteral value: String) {
        key = value
    }

    /// The text.
    public var description: String { key }

    /// The resource whose text is the interpolated literal (`"Hello \(name)"`).
    public init(stringInterpolation: DefaultStringInterpolation) {
        key = String(stringInterpolation: stringInterpolation)
    }
}

/// What an intent does, in a sentence the user reads (AppIntents' `IntentDescription`).
public struct IntentDescription: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The sentence.
    public let descriptionText: LocalizedStringResource

    /// A description reading `descriptionText`.
    public init(_ descriptionText: String) {
        self.descriptionText = LocalizedStringResource(descriptionText)
    }

    /// A description reading the literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }
}
