import AppIntents
import Foundation
import Primitives
import Testing

@testable import WidgetKit

/// An intent declaring no title or description: AppIntent's defaults apply.
private struct SelectedDefaults: WidgetConfigurationIntent {
    @Parameter(title: "User") var login: String?
}

/// A configuration with a choice among fixed cases, as watchOS widgets declare one.
private enum Accent: String, AppEnum {
    case blue, orange
    static var typeDisplayRepresentation: TypeDisplayRepresentation { "Accent" }
    static var caseDisplayRepresentations: [Accent: DisplayRepresentation] {
        [.blue: "Blue", .orange: DisplayRepresentation(title: "Orange", subtitle: "Warm")]
    }
}

private struct AccentIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource { "Accent" }
    @Parameter(title: "Accent", description: "The widget's color.", default: .blue) var accent: Accent
    @Parameter(title: "Label", description: "Shown under the count.") var label: String?
}

@Suite struct TimelineAPITests {
    @Test func theStaticTemplateAnswersThroughItsCompletionHandler() {
        let context = TimelineProviderContext(family: .accessoryRectangular)
        let received = Received<Timeline<SimpleEntry>>()
        Provider().getTimeline(in: context) { received.set($0) }
        let timeline = received.value
        #expect(timeline?.entries.count == 5)
        #expect(timeline?.policy == .atEnd)
        #expect(timeline?.entries.first?.relevance == nil)
        #expect(Provider().placeholder(in: context).emoji == "😀")
    }

    @Test func theAppIntentTemplatesIntentKeepsItsTitleDescriptionAndParameter() async {
        #expect(ConfigurationAppIntent.title.key == "Configuration")
        #expect(ConfigurationAppIntent.description.descriptionText.key == "This is an example widget.")
        #expect(ConfigurationAppIntent().favoriteEmoji == "😃")
        let host = WidgetHost(kind: "emoji", provider: IntentProvider())
        host.place(.accessoryCircular)
        let day = await host.run(for: 3600)
        #expect(day.showing(.accessoryCircular, at: host.date(hours: 0.5))?.entry.configuration.favoriteEmoji == "😃")
    }

    @Test func aParameterIsSharedByCopiesAsAppIntentsClassIsAndAnOptionalStartsEmpty() {
        let emoji = Parameter(title: "Favorite Emoji", default: "😃")
        let copy = emoji
        emoji.wrappedValue = "🦊"
        #expect(copy.wrappedValue == "🦊")
        #expect(emoji.title.description == "Favorite Emoji" && emoji.description == nil)
        let login = Parameter<String?>(title: "User")
        #expect(login.wrappedValue == nil)
        #expect(SelectedDefaults.title.key == "SelectedDefaults")
        #expect(SelectedDefaults.description.descriptionText.key.isEmpty)
    }

    @Test func theIntentTemplateAnswersAsynchronouslyForItsConfiguration() async {
        let context = TimelineProviderContext(family: .accessoryCircular, isPreview: true)
        let intent = ConfigurationAppIntent()
        intent.favoriteEmoji = "🦊"
        let timeline = await IntentProvider().timeline(for: intent, in: context)
        #expect(timeline.entries.map(\.configuration.favoriteEmoji) == Array(repeating: "🦊", count: 5))
        let snapshot = await IntentProvider().snapshot(for: intent, in: context)
        #expect(snapshot.configuration.favoriteEmoji == "🦊")
        #expect(IntentProvider().recommendations().map(\.description) == ["Example Widget"])
        #expect(context.isPreview)
        #expect(context.displaySize == WidgetFamily.accessoryCircular.defaultDisplaySize)
    }

    /// Xcode's widget template sets up a preview intent held in a `let`; AppIntents'
    /// parameters are objects, so that compiles there and here.
    @Test func theTemplatesPreviewIntentIsSetUpThroughALet() {
        let intent = ConfigurationAppIntent()
        intent.favoriteEmoji = "😀"
        #expect(intent.favoriteEmoji == "😀")
        #expect(intent.$favoriteEmoji.title == "Favorite Emoji")
        #expect(ConfigurationAppIntent().favoriteEmoji == "😃", "a new intent starts from the default")
    }

    @Test func enumParametersAndDescriptionsReadAsAppIntentsDo() {
        let intent = AccentIntent()
        #expect(intent.accent == .blue && intent.label == nil)
        #expect(intent.$accent.description?.descriptionText == "The widget's color.")
        intent.accent = .orange
        #expect(intent.accent.localizedStringResource == "Orange")
        #expect(Accent.caseDisplayRepresentations[.orange]?.subtitle == "Warm")
        #expect(Accent.typeDisplayRepresentation.name.key == "Accent" && Accent.allCases.count == 2)
        let name = "octocat"
        let greeting: LocalizedStringResource = "Hello \(name)"
        #expect(greeting.key == "Hello octocat")
    }

    @Test func policiesCompareAndDescribeLikeWidgetKits() {
        let d = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(TimelineReloadPolicy.after(d) == .after(d))
        #expect(TimelineReloadPolicy.after(d) != .atEnd)
        #expect(TimelineReloadPolicy.never.description == "never")
        #expect(TimelineReloadPolicy.after(d).description == "after(2027-01-15T08:00:00.000Z)")
        #expect(TimelineReloadPolicy.after(d).date == d)
    }

    @Test func familiesUseApplesCaseNames() {
        #expect(WidgetFamily.allCases.map(\.rawValue) == [
            "systemSmall", "systemMedium", "systemLarge", "systemExtraLarge",
            "accessoryCircular", "accessoryRectangular", "accessoryInline", "accessoryCorner",
        ])
        #expect(WidgetFamily.accessoryFamilies.allSatisfy { $0.isAccessory })
        #expect(!WidgetFamily.systemSmall.isAccessory)
    }

    @Test func widgetCenterOutsideAHostDoesNothing() async throws {
        WidgetCenter.shared.reloadTimelines(ofKind: "favorites")
        WidgetCenter.shared.reloadAllTimelines()
        let configurations = try await WidgetCenter.shared.currentConfigurations()
        #expect(configurations.isEmpty)
        let info = WidgetInfo(kind: "k", family: .accessoryCorner, configuration: ConfigurationAppIntent())
        #expect(info.widgetConfigurationIntent(of: ConfigurationAppIntent.self)?.favoriteEmoji == "😃")
    }
}

/// A value a completion handler hands over, read after it ran.
final class Received<Value: Sendable>: Sendable {
    private let box = LockedState<Value?>(nil)
    func set(_ value: Value) { box.withLock { $0 = value } }
    var value: Value? { box.withLock { $0 } }
}
