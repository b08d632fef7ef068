/// A parameter of an intent the user configures (AppIntents' `@Parameter`).
///
/// `@Parameter(title: "Favorite Emoji", default: "😃") var favoriteEmoji: String` declares a
/// parameter with its title and default value; `@Parameter(title: "User") var login: String?`
/// one that starts empty. Unlike AppIntents' class, this is a value: copying an intent copies
/// its parameters, so changing one intent's parameter never changes another's.
@propertyWrapper
public struct Parameter<Value> {
    /// The title the configuration screen shows.
    public let title: LocalizedStringResource
    /// The parameter's value.
    public var wrappedValue: Value

    /// A parameter titled `title` whose value starts as `defaultValue`.
    public init(title: LocalizedStringResource, default defaultValue: Value) {
        self.title = title
        wrappedValue = defaultValue
    }

    /// A parameter titled `title` whose value starts as `wrappedValue` (`@Parameter(title:) var x = …`).
    public init(wrappedValue: Value, title: LocalizedStringResource) {
        self.title = title
        self.wrappedValue = wrappedValue
    }
}

extension Parameter {
    /// An optional parameter titled `title`, empty until the user picks a value.
    public init<Wrapped>(title: LocalizedStringResource) where Value == Wrapped? {
        self.init(title: title, default: nil)
    }
}

extension Parameter: Sendable where Value: Sendable {}
extension Parameter: Equatable where Value: Equatable {}
extension Parameter: Hashable where Value: Hashable {}
