import Foundation

/// What a ``WidgetHost`` run did: what every widget showed at every moment, every reload with
/// its reasons and the budget left, every refused reload, every provider that did not
/// answer, and the app events. Query it, assert on it (``expectShown(_:within:of:_:where:)``,
/// ``expectNoRefusedReloads()``), or draw it (``svgStrip()``).
public struct WidgetDay<Entry: TimelineEntry & Sendable>: Sendable {
    /// The widget kind.
    public let kind: String
    /// The virtual start and end.
    public let start: Date
    public let end: Date
    /// The widget instances, in placement order.
    public let widgets: [HostedWidget]
    /// Every entry that came on screen, in time order (the placeholders first, at ``start``).
    public let shown: [ShownEntry<Entry>]
    /// Every reload, in time order.
    public let reloads: [HostReload]
    /// Every reload the budget refused, in time order.
    public let refusals: [HostRefusal]
    /// Every provider call that never completed (or completed twice).
    public let providerFailures: [ProviderFailure]
    /// The app events, in time order.
    public let appEvents: [AppEventRecord]
    /// How many times the app called `invalidateConfigurationRecommendations()`.
    public let recommendationsInvalidated: Int
    /// How many times the app called `invalidateRelevance(ofKind:)` with this day's kind.
    public let relevanceInvalidated: Int

    /// The instance in `family` (the first, if several).
    public func widget(_ family: WidgetFamily) -> HostedWidget? {
        widgets.first { $0.family == family }
    }

    /// What the widget with `id` showed, in time order.
    public func shown(id: String) -> [ShownEntry<Entry>] {
        shown.filter { $0.widgetID == id }
    }

    /// What the widget in `family` showed, in time order.
    public func shown(_ family: WidgetFamily) -> [ShownEntry<Entry>] {
        widget(family).map { shown(id: $0.id) } ?? []
    }

    /// The entry on the screen of the widget in `family` at `date`.
    public func showing(_ family: WidgetFamily, at date: Date) -> ShownEntry<Entry>? {
        shown(family).last { $0.from <= date }
    }

    /// The reloads of the widget in `family`.
    public func reloads(_ family: WidgetFamily) -> [HostReload] {
        reloads.filter { $0.family == family }
    }

    /// The refusals of the widget in `family`.
    public func refusals(_ family: WidgetFamily) -> [HostRefusal] {
        refusals.filter { $0.family == family }
    }

    /// Whether the widget in `family` was stale at `date`: a reload was refused and none
    /// has happened since.
    public func isStale(_ family: WidgetFamily, at date: Date) -> Bool {
        guard let refused = refusals(family).last(where: { $0.at <= date }) else { return false }
        return !reloads(family).contains { $0.at >= refused.at && $0.at <= date }
    }

    /// The stale stretches of the widget with `id`: from a refusal to the next reload (or the end).
    public func staleIntervals(id: String) -> [(from: Date, to: Date)] {
        var out: [(from: Date, to: Date)] = []
        var since: Date?
        let marks = refusals.filter { $0.widgetID == id }.map { ($0.at, true) }
            + reloads.filter { $0.widgetID == id }.map { ($0.at, false) }
        for (at, refused) in marks.sorted(by: { $0.0 < $1.0 }) {
            if refused, since == nil { since = at }
            if !refused, let s = since {
                out.append((s, at))
                since = nil
            }
        }
        if let s = since { out.append((s, end)) }
        return out
    }

    /// The budget left for the widget in `family` after its last reload at or before `date`.
    public func budgetLeft(_ family: WidgetFamily, at date: Date) -> Int? {
        reloads(family).last { $0.at <= date }?.budgetLeft
    }

    /// The first refusal of the day, across widgets: when the widget froze.
    public var firstRefusal: HostRefusal? { refusals.first }

    /// One line per reload, refusal and provider failure, in time order (for a test's log).
    public var log: [String] {
        let lines: [(Date, String)] =
            reloads.map { ($0.at, $0.description) } + refusals.map { ($0.at, $0.description) }
            + providerFailures.map { ($0.at, $0.description) }
        return lines.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
    }
}
