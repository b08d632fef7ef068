import Foundation

/// A parameter of an intent the user configures (AppIntents' `@Parameter`).
///
/// `@Parameter(title: "Favorite Emoji", default: "😃") var favoriteEmoji: String` declares a
/// parameter with its title and default value; `@Parameter(title: "User") var login: String?`
/// one that starts empty. As AppIntents' `IntentParameter` is a class, the value lives in a
/// shared box: an intent held in a `let` can be set up (`let intent = ConfigurationAppIntent();
/// intent.favoriteEmoji = "😀"`, Xcode's widget template), and a copy of an intent shares its
/// parameters with the original. `$favoriteEmoji` is the parameter itself.
@propertyWrapper
public struct Parameter<Value> {
    /// The title the configuration screen shows.
    public let title: LocalizedStringResource
    /// The sentence under the title, if any.
    public let description: IntentDescription?
    private let box: ParameterBox<Value>

    /// The parameter's value; setting it changes every copy of the intent (AppIntents' class).
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }

    /// `$name`: the parameter itself, with its title and description.
    public var projectedValue: Parameter<Value> { self }

    /// A parameter titled `title` whose value starts as `defaultValue`.
    public init(title: LocalizedStringResource, description: IntentDescription? = nil, default defaultValue: Value) {
        self.title = title
        self.description = description
        box = ParameterBox(defaultValue)
    }

    /// A parameter titled `title` whose value starts as `wrappedValue` (`@Parameter(title:) var x = …`).
    public init(wrappedValue: Value, title: LocalizedStringResource, description: IntentDescription? = nil) {
        self.init(title: title, description: description, default: wrappedValue)
    }
}

extension Parameter {
    /// An optional parameter titled `title`, empty until the user picks a value.
    public init<Wrapped>(title: LocalizedStringResource, description: IntentDescription? = nil) where Value == Wrapped? {
        self.init(title: title, description: description, default: nil)
    }
}

/// `@unchecked Sendable`: the box holds a `Sendable` value, read and written only under its lock.
extension Parameter: @unchecked Sendable where Value: Sendable {}

extension Parameter: Equatable where Value: Equatable {
    /// Same title and the same value now.
    public static func == (a: Parameter, b: Parameter) -> Bool {
        a.title == b.title && a.wrappedValue == b.wrappedValue
    }
}

extension Parameter: Hashable where Value: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(title)
        hasher.combine(wrappedValue)
    }
}

/// Where a ``Parameter``'s value lives: one box shared by every copy of the parameter.
final class ParameterBox<Value> {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// `@unchecked Sendable`: a `Sendable` value, read and written only under the box's lock.
extension ParameterBox: @unchecked Sendable where Value: Sendable {}
