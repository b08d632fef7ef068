// App code compiled as Xcode 26 compiles a new target: Swift 5 language mode, everything
// main-actor isolated unless marked otherwise (`SWIFT_DEFAULT_ACTOR_ISOLATION = MainActor`).
// Apple's WidgetKit takes this code without a diagnostic; so must this one (the target is
// built with `make build-tests`, which fails on any warning).
import Foundation
import Testing
import WidgetKit

/// A watch app's model: main-actor isolated by default, as in a new Xcode 26 target.
final class PlacedWidgetsModel {
    private(set) var families: [WidgetFamily] = []

    /// Asks WidgetKit which widgets the user placed. The handler calls a main-actor method:
    /// Apple declares `getCurrentConfigurations` `@preconcurrency`, so in Swift 5 mode the
    /// handler is not `@Sendable` here and no warning is given.
    func refresh() {
        WidgetCenter.shared.getCurrentConfigurations { result in
            if case .success(let widgets) = result { self.show(widgets) }
        }
    }

    private func show(_ widgets: [WidgetInfo]) {
        families = widgets.map(\.family)
    }
}

// The entry and provider are `nonisolated`: a `WidgetHost` runs them off the main actor.
nonisolated struct CountEntry: TimelineEntry {
    let date: Date
}

nonisolated struct CountProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date()) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {
        completion(CountEntry(date: Date()))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        completion(Timeline(entries: [CountEntry(date: Date())], policy: .never))
    }
}

@Test func aMainActorModelReadsThePlacedWidgetsThroughItsCompletionHandler() async {
    let model = PlacedWidgetsModel()
    let host = WidgetHost(kind: "count", provider: CountProvider())
    host.place(.accessoryRectangular)
    host.place(.accessoryCircular)
    host.at(hours: 1, "app opens") { model.refresh() }
    _ = await host.run(for: 7200)
    #expect(model.families == [.accessoryRectangular, .accessoryCircular])
}
