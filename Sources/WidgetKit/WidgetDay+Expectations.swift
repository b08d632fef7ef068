import Foundation

/// A failed expectation about a ``WidgetDay``: thrown by its `expect…` helpers, so a test
/// that `try`s them fails with this message (Swift Testing and XCTest both report thrown
/// errors).
public struct WidgetExpectationFailure: Error, CustomStringConvertible {
    /// What was expected and what the widget did instead.
    public let description: String
}

extension WidgetDay {
    /// Expects the widget in `family` to have shown an entry matching `predicate` at some
    /// moment within `seconds` after `change` (the entry on screen at `change` counts);
    /// returns the first such entry.
    @discardableResult
    public func expectShown(
        _ family: WidgetFamily, within seconds: TimeInterval, of change: Date, _ what: String = "the new data",
        where predicate: (Entry) -> Bool
    ) throws -> ShownEntry<Entry> {
        guard widget(family) != nil else {
            throw WidgetExpectationFailure(description: "no widget placed in \(family)")
        }
        let deadline = change.addingTimeInterval(seconds)
        let onScreen = [showing(family, at: change)].compactMap { $0 }
            + shown(family).filter { $0.from > change && $0.from <= deadline }
        if let hit = onScreen.first(where: { !$0.isPlaceholder && predicate($0.entry) }) { return hit }
        let seen = onScreen.map { "\(WidgetTime.clock($0.from)) \($0.text)" }.joined(separator: "; ")
        let later = shown(family).first { $0.from > deadline && predicate($0.entry) }
        var message =
            "\(family) did not show \(what) within \(Int(seconds)) s of \(WidgetTime.iso8601(change)); it showed: \(seen)"
        if let later {
            message += "; it showed it only at \(WidgetTime.iso8601(later.from))"
        } else {
            message += "; it never showed it before \(WidgetTime.iso8601(end))"
        }
        if let refusal = refusals(family).first(where: { $0.at >= change && $0.at <= deadline }) {
            message += " (\(refusal))"
        } else if !reloads(family).contains(where: { $0.at >= change && $0.at <= deadline }) {
            message += " (no reload in that time: did the app call reloadTimelines(ofKind: \"\(kind)\")?)"
        }
        throw WidgetExpectationFailure(description: message)
    }

    /// Expects no reload of any widget to have been refused for budget between `from` and
    /// `to` (`to` excluded; by default the whole run, a refusal at ``end`` included).
    public func expectNoRefusedReloads(from: Date? = nil, to: Date? = nil) throws {
        let lower = from ?? start
        let refused = refusals.filter { r in r.at >= lower && (to.map { r.at < $0 } ?? (r.at <= end)) }
        guard let first = refused.first else { return }
        throw WidgetExpectationFailure(
            description: "\(refused.count) reload(s) refused; first: \(first); reloads charged before it: "
                + "\(reloads.filter { $0.widgetID == first.widgetID && $0.charged && $0.at <= first.at }.count)")
    }

    /// Expects no reload to have been refused on simulated day `day` (1: the first 24 h).
    public func expectNoRefusedReloads(onDay day: Int) throws {
        let from = WidgetTime.add(start, Double(day - 1) * 86_400)
        try expectNoRefusedReloads(from: from, to: WidgetTime.add(from, 86_400))
    }

    /// Expects every provider call to have completed, exactly once.
    public func expectProviderAlwaysCompleted() throws {
        guard let first = providerFailures.first else { return }
        throw WidgetExpectationFailure(description: "\(providerFailures.count) provider failure(s); first: \(first)")
    }

    /// Expects no timeline to have had entries under the minimum spacing (or out of order).
    public func expectWellSpacedEntries() throws {
        guard let bad = reloads.first(where: { !$0.warnings.isEmpty }) else { return }
        throw WidgetExpectationFailure(
            description: "\(bad): \(bad.warnings.map(\.description).joined(separator: ", "))")
    }
}
