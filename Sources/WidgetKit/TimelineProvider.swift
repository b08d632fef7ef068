import AppIntents
import Foundation

/// A type that advises WidgetKit when to update a widget's display (WidgetKit's
/// `TimelineProvider`): a synchronous placeholder, a snapshot and a timeline, both through
/// completion handlers.
///
/// Call each completion handler exactly once. The host reports a provider that does not
/// call it within ``WidgetReloadRules/providerTimeout`` (a reload that never ends leaves the
/// widget on its old timeline).
public protocol TimelineProvider {
    /// The entry type the provider makes.
    associatedtype Entry: TimelineEntry
    /// What the provider is asked about: family, preview, display size.
    typealias Context = TimelineProviderContext

    /// An entry for the redacted placeholder; return at once.
    func placeholder(in context: Context) -> Entry
    /// The entry for a transient appearance (the gallery when `context.isPreview`).
    func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void)
    /// The timeline from now on, and when to ask for the next one.
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void)
}

/// A type that advises WidgetKit when to update a user-configured widget's display
/// (WidgetKit's `AppIntentTimelineProvider`): the async form, given the instance's
/// configuration intent.
public protocol AppIntentTimelineProvider {
    /// The entry type the provider makes.
    associatedtype Entry: TimelineEntry
    /// The configuration intent the user set on the widget instance.
    associatedtype Intent: WidgetConfigurationIntent
    /// What the provider is asked about: family, preview, display size.
    typealias Context = TimelineProviderContext

    /// An entry for the redacted placeholder; return at once.
    func placeholder(in context: Context) -> Entry
    /// The entry for a transient appearance, for `configuration`.
    func snapshot(for configuration: Intent, in context: Context) async -> Entry
    /// The timeline for `configuration` from now on, and when to ask for the next one.
    func timeline(for configuration: Intent, in context: Context) async -> Timeline<Entry>
    /// watchOS: the preconfigured choices (a watch has no configuration screen).
    func recommendations() -> [AppIntentRecommendation<Intent>]
}

extension AppIntentTimelineProvider {
    /// No recommendations (iOS has a configuration screen).
    public func recommendations() -> [AppIntentRecommendation<Intent>] { [] }
}

/// A preconfigured intent the watch offers for a widget (WidgetKit's `AppIntentRecommendation`).
public struct AppIntentRecommendation<Intent: WidgetConfigurationIntent>: Sendable {
    /// The configuration.
    public let intent: Intent
    /// What the user reads when picking it.
    public let description: String

    /// A recommendation of `intent`, described as `description`.
    public init(intent: Intent, description: String) {
        self.intent = intent
        self.description = description
    }
}
