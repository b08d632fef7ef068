import Foundation
import Testing
import WidgetKit

/// Sample data in the gallery (`isPreview`), the store's count otherwise: what Apple asks of
/// `getSnapshot`.
private struct GalleryProvider: TimelineProvider {
    let store: CounterStore
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping @Sendable (CountEntry) -> Void) {
        let count = context.isPreview ? 42 : store.count
        DispatchQueue.global().async { completion(CountEntry(date: Date(), count: count)) }
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        completion(Timeline(entries: [CountEntry(date: Date(), count: store.count)], policy: .never))
    }
}

/// `WidgetHost.snapshot`: the provider's `getSnapshot`, which a day never calls.
@Suite struct WidgetSnapshotTests {
    @Test func theGalleryGetsTheSnapshotWithIsPreviewAndTheFaceGetsItWithout() async throws {
        let store = CounterStore()
        store.set(7)
        let host = WidgetHost(kind: "counter", provider: GalleryProvider(store: store))
        #expect(try await host.snapshot(.accessoryRectangular).count == 42)
        #expect(try await host.snapshot(.accessoryCircular, isPreview: false).count == 7)
        // Nothing of the day: no reload, no budget spent.
        let day = await host.run(for: 3600)
        #expect(day.reloads.count == 1, "the first timeline only: \(day.log)")
    }

    @Test func anIntentProvidersSnapshotGetsTheConfigurationGiven() async throws {
        let host = WidgetHost(kind: "emoji", provider: IntentProvider())
        let intent = ConfigurationAppIntent()
        intent.favoriteEmoji = "🦊"
        #expect(try await host.snapshot(.accessoryRectangular, configuration: intent).configuration.favoriteEmoji == "🦊")
        #expect(try await host.snapshot(.accessoryRectangular).configuration.favoriteEmoji == "😃", "the intent's default")
    }

    @Test func aSnapshotThatNeverCompletesIsAnError() async {
        let host = WidgetHost(kind: "counter", provider: SilentProvider(), rules: WidgetReloadRules(providerTimeout: 0.2))
        await #expect(throws: WidgetSnapshotError.neverCompleted(family: .accessoryInline, timeout: 0.2)) {
            try await host.snapshot(.accessoryInline)
        }
    }
}
