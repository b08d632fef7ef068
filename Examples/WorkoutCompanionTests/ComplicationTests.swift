import Foundation
import Primitives
import Testing
import WatchConnectivity
import WidgetKit
import WorkoutCompanion

/// The watch app's delegate and the complication's provider under WidgetKit's rules: what the
/// phone sends at 09:00 is on the face within a minute, because the delegate stores it and then
/// calls `reloadTimelines(ofKind:)`.
@Suite struct ComplicationTests {
    /// A session the delegate is called with by the test (no relay: the host's events stand in
    /// for WatchConnectivity's deliveries).
    let session = WCSession(environment: nil)

    @Test func whatThePhoneSendsIsOnTheFaceWithinAMinute() async throws {
        let store = WorkoutStore()
        let app = WatchSessionManager(session: session, store: store)
        let host = WidgetHost(kind: WorkoutWidgetKind.kind, provider: WorkoutProvider(store: store))
        host.place(.accessoryCircular)
        host.place(.accessoryRectangular)
        let session = session
        host.at(hours: 9, "phone: context 18/30") {
            app.session(session, didReceiveApplicationContext: ["minutes": 18, "goal": 30])
        }
        host.at(hours: 13, "phone: complication 31") {
            app.session(session, didReceiveUserInfo: ["complicationMinutes": 31])
        }
        host.at(hours: 15, "phone: a workout") {
            app.session(session, didReceiveUserInfo: ["workout": "run"])
        }
        let day = await host.run()
        for family in [WidgetFamily.accessoryCircular, .accessoryRectangular] {
            try day.expectShown(family, within: 60, of: host.date(hours: 9)) { $0.minutes == 18 && $0.goal == 30 }
            try day.expectShown(family, within: 60, of: host.date(hours: 13)) { $0.minutes == 31 }
        }
        // A workout for the history is no reason to reload the complication.
        #expect(day.appEvents.map(\.reloadCalls.count) == [1, 1, 0])
        try day.expectNoRefusedReloads()
        try day.expectProviderAlwaysCompleted()
        // The rectangular family gets a relevant entry an hour on while the goal is not met.
        let relevant = day.shown(.accessoryRectangular).compactMap(\.entry.relevance)
        #expect(relevant.contains { $0.score == 12 && $0.duration == 900 })
    }

    /// The gallery's snapshot (`isPreview`) is the sample; the placed widgets are what
    /// `getCurrentConfigurations` and `currentConfigurations()` list during an app event.
    @Test func theGalleryGetsTheSampleAndTheAppSeesItsConfiguredWidgets() async throws {
        let store = WorkoutStore()
        store.save(minutes: 3)
        let host = WidgetHost(kind: WorkoutWidgetKind.kind, provider: WorkoutProvider(store: store))
        host.place(.accessoryCorner)
        host.place(.accessoryInline)
        let preview = try await host.snapshot(.accessoryCorner)
        #expect(preview.minutes == 20)
        let viaHandler = LockedList()
        let viaAsync = LockedList()
        host.at(hours: 1, "app: which widgets?") {
            WidgetCenter.shared.getCurrentConfigurations { result in
                guard case .success(let widgets) = result else { return }
                viaHandler.set(widgets.map { "\($0.kind) \($0.family)" })
            }
        }
        host.at(hours: 2, "app: which widgets, async") {
            let widgets = (try? await WidgetCenter.shared.currentConfigurations()) ?? []
            viaAsync.set(widgets.map { "\($0.kind) \($0.family)" })
        }
        _ = await host.run(for: 3 * 3600)
        let expected = ["WorkoutWidget accessoryCorner", "WorkoutWidget accessoryInline"]
        #expect(viaHandler.get().sorted() == expected)
        #expect(viaAsync.get().sorted() == expected)
    }
}

/// Strings a handler sets, read by the test.
final class LockedList: Sendable {
    private let strings = Primitives.LockedState<[String]>([])
    func set(_ value: [String]) { strings.withLock { $0 = value } }
    func get() -> [String] { strings.withLock { $0 } }
}
