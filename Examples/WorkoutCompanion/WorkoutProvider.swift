// The complication's timeline provider, as a watchOS target holds it (the SwiftUI part, the
// `Widget` and its view, is in WorkoutWidget.swift, which the Linux target excludes: README,
// "Test your own widget").
import Foundation
import WidgetKit

/// The widget's kind, shared by the `StaticConfiguration`, the app's reloads and the provider.
/// (On a device it often sits on the `Widget` struct; that file is SwiftUI, so here it has its own.)
public enum WorkoutWidgetKind {
    public static let kind = "WorkoutWidget"
}

public struct WorkoutEntry: TimelineEntry, Sendable {
    public let date: Date
    public let minutes: Int
    public let goal: Int
    public var relevance: TimelineEntryRelevance?

    public var progress: Double { goal > 0 ? Double(minutes) / Double(goal) : 0 }
}

public struct WorkoutProvider: TimelineProvider {
    let store: WorkoutStore

    public init(store: WorkoutStore) {
        self.store = store
    }

    public func placeholder(in context: Context) -> WorkoutEntry {
        WorkoutEntry(date: Date(), minutes: 20, goal: 30)
    }

    public func getSnapshot(in context: Context, completion: @escaping (WorkoutEntry) -> Void) {
        if context.isPreview {
            completion(WorkoutEntry(date: Date(), minutes: 20, goal: 30))
            return
        }
        completion(WorkoutEntry(date: Date(), minutes: store.minutes, goal: store.goal))
    }

    public func getTimeline(in context: Context, completion: @escaping (Timeline<WorkoutEntry>) -> Void) {
        let now = Date()
        let minutes = store.minutes
        let goal = store.goal
        // The ring only changes when the phone sends new data; the entry at the hour makes the
        // Smart Stack raise it if the goal is not met yet.
        let nextHour = Calendar.current.date(byAdding: .hour, value: 1, to: now)!
        var entries = [WorkoutEntry(date: now, minutes: minutes, goal: goal)]
        if context.family == .accessoryRectangular, minutes < goal {
            entries.append(
                WorkoutEntry(
                    date: nextHour, minutes: minutes, goal: goal,
                    relevance: TimelineEntryRelevance(score: Float(goal - minutes), duration: 15 * 60)))
        }
        completion(Timeline(entries: entries, policy: .after(Calendar.current.date(byAdding: .hour, value: 2, to: now)!)))
    }
}
