/// An action the system runs on the app's behalf (AppIntents' `AppIntent`), reduced to what a
/// widget's configuration needs: a default configuration, a title and a description.
/// There is no `perform()`: nothing here runs intents.
public protocol AppIntent: Sendable {
    /// What the configuration screen calls the intent. Default: the type's name.
    static var title: LocalizedStringResource { get }
    /// A sentence saying what the intent configures. Default: empty.
    static var description: IntentDescription { get }
    /// The default configuration.
    init()
}

extension AppIntent {
    /// The type's name, for intents that declare no title.
    public static var title: LocalizedStringResource { LocalizedStringResource(String(describing: Self.self)) }
    /// An empty description, for intents that declare none.
    public static var description: IntentDescription { IntentDescription("") }
}

/// A widget's configuration parameters (AppIntents' `WidgetConfigurationIntent`): declare them
/// with `@Parameter`, or as ordinary stored properties.
///
/// Swift 6 rejects a mutable stored `static var title: LocalizedStringResource = "…"` (Xcode
/// 15's template) as shared mutable state, here as on Apple's SDK; write it computed, as
/// Xcode 16's template does: `static var title: LocalizedStringResource { "Configuration" }`.
public protocol WidgetConfigurationIntent: AppIntent {}
