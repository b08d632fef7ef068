import Testing
import WidgetKit

// This file does not import Foundation, on purpose. On iOS and watchOS `import WidgetKit` alone
// makes Foundation's names visible, so a provider moved out of the template's SwiftUI file into a
// file of its own often has no other import (Chromium's iOS widget provider is written so).

nonisolated struct FoundationFreeEntry: TimelineEntry {
    let date: Date
    let link: URL?
}

nonisolated struct FoundationFreeProvider: TimelineProvider {
    func placeholder(in context: Context) -> FoundationFreeEntry { FoundationFreeEntry(date: .now, link: nil) }

    func getSnapshot(in context: Context, completion: @escaping (FoundationFreeEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<FoundationFreeEntry>) -> Void) {
        let start = Date()
        let entries = (0..<3).map { FoundationFreeEntry(date: start.addingTimeInterval(Double($0) * 3600), link: URL(string: "https://github.com")) }
        completion(Timeline(entries: entries, policy: .atEnd))
    }
}

@Suite struct WidgetKitFoundationReexportTests {
    @Test func aProviderFileImportingOnlyWidgetKitSeesFoundation() async {
        let host = WidgetHost(kind: "plain", provider: FoundationFreeProvider())
        host.place(.accessoryRectangular)
        let day = await host.run(for: 2 * 3600)
        #expect(!day.reloads.isEmpty)
    }
}
