// A widget written the way an iOS/watchOS developer writes one against Apple's WidgetKit, from
// Apple's documentation only (TimelineProvider, TimelineEntry, Timeline, TimelineReloadPolicy,
// TimelineEntryRelevance, TimelineProviderContext, WidgetFamily, WidgetCenter), without the
// SwiftUI part (README "Test your own widget": out of scope). Nothing in this file was adapted to
// this module: it is the code a watchOS target holds. WidgetKitAppleDocumentedTests runs it.
//
// What Apple's SDK accepts but this module does not (found by the Apple-documented suite, checked
// with `swiftc -typecheck` against the module, so left out of this file). Three more were found
// and fixed (TimelineEntryRelevance's `var` properties, `WidgetCenter.UserInfoKey`,
// `invalidateRelevance(ofKind:)`): the code below uses them.
//
// 1. Error: `WidgetFamily.systemExtraLargePortrait` (iOS 27, macOS 27, visionOS 26; not watchOS).
// 2. Error: `IntentTimelineProvider` (the SiriKit-intent provider, iOS 14, watchOS 9; its Intent is
//    an `INIntent`, and Intents has no Linux build either).
// 3. Warning (an error under this package's zero-warning build): the family switch every watchOS
//    complication writes, whose four accessory cases are all a watchOS target may name (the system
//    families are unavailable on watchOS, so Apple's compiler does not ask for them):
//        switch context.family {
//        case .accessoryCircular: …  case .accessoryRectangular: …  case .accessoryInline: …  case .accessoryCorner: …
//        @unknown default: …
//        }
//    here: "warning: switch must be exhaustive — add missing case: '.systemSmall'" (and the other three).
//    Below, the switch names the families it handles and ends in `default:`, which compiles on both.
//
// Documented by the README as out of scope (not findings): `relevance()` / `WidgetRelevance`,
// `context.environmentVariants`, widget push, SwiftUI (`Widget`, `WidgetConfiguration`, views).
import Foundation
import WidgetKit

/// The next event and how long until it starts.
struct UpNextEntry: TimelineEntry {
    var date: Date
    var title: String
    var minutesLeft: Int
    var relevance: TimelineEntryRelevance?
}

/// The app's events, shared with the widget (an App Group's container on a device).
final class UpNextStore: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [(title: String, start: Date)] = []

    func add(_ title: String, at start: Date) {
        lock.lock()
        events.append((title, start))
        events.sort { $0.start < $1.start }
        lock.unlock()
        // Apple: "Tell the system to reload all timelines when data changes".
        WidgetCenter.shared.reloadTimelines(ofKind: UpNextWidget.kind)
    }

    func removeAll() {
        lock.lock()
        events.removeAll()
        lock.unlock()
        WidgetCenter.shared.reloadAllTimelines()
    }

    func upcoming(after date: Date) -> [(title: String, start: Date)] {
        lock.lock()
        defer { lock.unlock() }
        return events.filter { $0.start > date }
    }
}

/// The widget's kind, as its `StaticConfiguration(kind:provider:content:)` names it.
enum UpNextWidget {
    static let kind = "UpNextWidget"
}

struct UpNextProvider: TimelineProvider {
    typealias Entry = UpNextEntry

    var store: UpNextStore

    func placeholder(in context: Context) -> UpNextEntry {
        UpNextEntry(date: Date(), title: "Standup", minutesLeft: 10)
    }

    func getSnapshot(in context: Context, completion: @escaping (UpNextEntry) -> ()) {
        if context.isPreview {
            // The widget gallery: sample data, at once.
            completion(UpNextEntry(date: Date(), title: "Design review", minutesLeft: 25))
            return
        }
        let next = store.upcoming(after: Date()).first
        completion(
            UpNextEntry(
                date: Date(), title: next?.title ?? "No events",
                minutesLeft: next.map { Int($0.start.timeIntervalSinceNow / 60) } ?? 0))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> ()) {
        let currentDate = Date()
        let upcoming = store.upcoming(after: currentDate)
        guard let next = upcoming.first else {
            // Nothing scheduled: look again in an hour.
            let entry = UpNextEntry(date: currentDate, title: "No events", minutesLeft: 0)
            let nextUpdate = Calendar.current.date(byAdding: .hour, value: 1, to: currentDate)!
            completion(Timeline(entries: [entry], policy: .after(nextUpdate)))
            return
        }

        // An entry every 15 minutes until the event starts ("at least about 5 minutes apart").
        var entries: [UpNextEntry] = []
        var entryDate = currentDate
        while entryDate < next.start {
            let minutes = Int(next.start.timeIntervalSince(entryDate) / 60)
            let score = Float(max(0, 120 - minutes))
            entries.append(
                UpNextEntry(
                    date: entryDate, title: shortTitle(next.title, for: context.family), minutesLeft: minutes,
                    relevance: TimelineEntryRelevance(score: score, duration: 15 * 60)))
            entryDate = Calendar.current.date(byAdding: .minute, value: 15, to: entryDate)!
        }
        var starting = TimelineEntryRelevance(score: 200)
        starting.duration = 10 * 60
        entries.append(
            UpNextEntry(
                date: next.start, title: shortTitle(next.title, for: context.family), minutesLeft: 0,
                relevance: starting))

        // After this event, the next one's countdown: ask again at the end; with none, wait for the app.
        let policy: TimelineReloadPolicy = upcoming.count > 1 ? .atEnd : .never
        let timeline = Timeline(entries: entries, policy: policy)
        completion(timeline)
    }

    private func shortTitle(_ title: String, for family: WidgetFamily) -> String {
        switch family {
        case .accessoryInline, .accessoryCorner:
            return String(title.prefix(12))
        case .accessoryCircular:
            return String(title.prefix(3))
        default:
            return title
        }
    }
}

/// App code that lists the placed widgets, as an app's settings screen does.
final class PlacedWidgetsLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    func refresh() {
        WidgetCenter.shared.getCurrentConfigurations { result in
            switch result {
            case .success(let widgets):
                let described = widgets.map { "\($0.kind) \($0.family)" }
                self.lock.lock()
                self.lines = described
                self.lock.unlock()
            case .failure(let error):
                print("widgets: \(error.localizedDescription)")
            }
        }
    }
}

/// The app's handler of the user activity a tapped widget opens it with, and its reaction to a
/// change of what makes its widgets relevant.
enum UpNextActivity {
    /// Which widget the user tapped, from the activity's user info.
    static func tappedKind(_ userInfo: [AnyHashable: Any]?) -> String? {
        userInfo?[WidgetCenter.UserInfoKey.kind] as? String
    }

    static func eventsMoved() {
        WidgetCenter.shared.invalidateRelevance(ofKind: UpNextWidget.kind)
    }
}

/// What a timeline's policy says, as app code reads it (Apple's policy is a struct: `==`, no payload).
func policyName<E: TimelineEntry>(_ timeline: Timeline<E>) -> String {
    switch timeline.policy {
    case .atEnd: return "atEnd"
    case .never: return "never"
    default: return "after"
    }
}
