// Providers as Xcode 16's watchOS widget templates write them, unchanged but for the SwiftUI
// views (see README "Test your own widget": out of scope) and, as both templates share this
// module, the App Intent template's `Provider`/`SimpleEntry` named `IntentProvider`/`IntentEntry`.
import Foundation
import WidgetKit
import AppIntents

// MARK: - The "Static Configuration" template

struct Provider: TimelineProvider {
    func placeholder(in context: Context) -> SimpleEntry {
        SimpleEntry(date: Date(), emoji: "😀")
    }

    func getSnapshot(in context: Context, completion: @escaping (SimpleEntry) -> ()) {
        let entry = SimpleEntry(date: Date(), emoji: "😀")
        completion(entry)
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> ()) {
        var entries: [SimpleEntry] = []

        // Generate a timeline consisting of five entries an hour apart, starting from the current date.
        let currentDate = Date()
        for hourOffset in 0 ..< 5 {
            let entryDate = Calendar.current.date(byAdding: .hour, value: hourOffset, to: currentDate)!
            let entry = SimpleEntry(date: entryDate, emoji: "😀")
            entries.append(entry)
        }

        let timeline = Timeline(entries: entries, policy: .atEnd)
        completion(timeline)
    }
}

struct SimpleEntry: TimelineEntry {
    let date: Date
    let emoji: String
}

// MARK: - The "App Intent Configuration" template (watchOS 10+)

struct ConfigurationAppIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource { "Configuration" }
    static var description: IntentDescription { "This is an example widget." }

    // An example configurable parameter.
    @Parameter(title: "Favorite Emoji", default: "😃")
    var favoriteEmoji: String
}

struct IntentProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> IntentEntry {
        IntentEntry(date: Date(), configuration: ConfigurationAppIntent())
    }

    func snapshot(for configuration: ConfigurationAppIntent, in context: Context) async -> IntentEntry {
        IntentEntry(date: Date(), configuration: configuration)
    }

    func timeline(for configuration: ConfigurationAppIntent, in context: Context) async -> Timeline<IntentEntry> {
        var entries: [IntentEntry] = []

        // Generate a timeline consisting of five entries an hour apart, starting from the current date.
        let currentDate = Date()
        for hourOffset in 0 ..< 5 {
            let entryDate = Calendar.current.date(byAdding: .hour, value: hourOffset, to: currentDate)!
            let entry = IntentEntry(date: entryDate, configuration: configuration)
            entries.append(entry)
        }

        return Timeline(entries: entries, policy: .atEnd)
    }

    func recommendations() -> [AppIntentRecommendation<ConfigurationAppIntent>] {
        // Create an array with all the preconfigured widgets to show.
        [AppIntentRecommendation(intent: ConfigurationAppIntent(), description: "Example Widget")]
    }
}

struct IntentEntry: TimelineEntry {
    let date: Date
    let configuration: ConfigurationAppIntent
}

// MARK: - A provider with relevance and @Sendable completions, answering off the calling thread

struct ScoredEntry: TimelineEntry {
    let date: Date
    let score: Float
    var relevance: TimelineEntryRelevance? { TimelineEntryRelevance(score: score, duration: 600) }
}

struct BackgroundProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoredEntry { ScoredEntry(date: Date(), score: 0) }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (ScoredEntry) -> Void) {
        DispatchQueue.global().async { completion(ScoredEntry(date: Date(), score: 1)) }
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<ScoredEntry>) -> Void) {
        DispatchQueue.global().async {
            let now = Date()
            let entries = (0..<3).map { ScoredEntry(date: now.addingTimeInterval(Double($0) * 900), score: Float($0)) }
            completion(Timeline(entries: entries, policy: .after(now.addingTimeInterval(3600))))
        }
    }
}
