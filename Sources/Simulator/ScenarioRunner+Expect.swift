import Foundation
import PhoneApp
import RelayProtocol
import WatchApp

extension ScenarioRunner {
    // MARK: - Waiting

    /// `wait`: the next `count` (default 1) matching events of a watch, within `timeout`.
    func wait(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        let event = s.event ?? "snapshot"
        let widget = s.widget
        let pick: @Sendable (WatchEvent) -> Bool
        switch event {
        case "snapshot":
            let revision = s.revision
            let logins = s.favorites
            pick = {
                guard case .snapshotStored(let r, let l) = $0 else { return false }
                return (revision == nil || r == revision) && (logins == nil || l == logins)
            }
        case "reload":
            let reason = s.reason
            pick = {
                guard case .widget(.reloaded(let r)) = $0 else { return false }
                return Self.matches(widget, r.widgetID, r.family)
                    && (reason == nil || r.reasons.map(\.rawValue).contains(reason!))
            }
        case "stale":
            pick = { if case .widget(.stale(let r)) = $0 { Self.matches(widget, r.widgetID, r.family) } else { false } }
        case "deleteAccepted", "deleteCompleted":
            let login = s.login
            let completed = event == "deleteCompleted"
            pick = {
                switch $0 {
                case .deleteAccepted(let l) where !completed: login == nil || l == login
                case .deleteCompleted(let l) where completed: login == nil || l == login
                default: false
                }
            }
        case "reachable", "unreachable":
            let want = event == "reachable"
            pick = { $0 == .reachability(want) }
        case "paired":
            pick = { if case .paired = $0 { true } else { false } }
        default:
            throw StepFailure(
                expected: "an event (snapshot, reload, stale, deleteAccepted, deleteCompleted, reachable, paired)",
                seen: "'\(event)'")
        }
        let count = s.count ?? 1
        let (found, seen) = await w.log.waitFor(count, timeout: s.timeout ?? 3, pick)
        if found.count < count {
            throw StepFailure(
                expected: "\(count) × \(event)\(s.revision.map { " \($0)" } ?? "")\(s.favorites.map { " \($0)" } ?? "") within \(s.timeout ?? 3) s",
                seen: "\(found.count); recent events: [\(seen.map(\.summary).joined(separator: ", "))]")
        }
    }

    /// Whether a widget (id `face.circular`, family `circular` or `accessoryCircular`) is meant.
    nonisolated static func matches(_ wanted: String?, _ id: String, _ family: WidgetFamily) -> Bool {
        guard let wanted else { return true }
        return wanted == id || wanted == family.shortName || wanted == family.rawValue
    }

    // MARK: - Expectations

    func expect(_ action: ScenarioAction, _ s: ScenarioStep) async throws {
        switch action {
        case .expectWidget: try await expectWidget(s)
        case .expectReloads: try await expectReloads(s)
        case .expectProfile: try await expectProfile(s)
        case .expectPhoneFavorites:
            let p = try await phone(s.actor ?? s.phone).running()
            let seen = try await p.favorites().map(\.login)
            try Self.equal(s.favorites ?? [], seen, "phone favorites")
        case .expectWatchFavorites:
            let state = try await watchState(s)
            try Self.equal(s.favorites ?? [], state.favorites.users.map(\.login), "watch favorites")
            if let pending = s.pending { try Self.equal(pending, state.favorites.pendingDeletes, "pending deletes") }
        default: try await expectRelay(s)
        }
    }

    static func equal(_ expected: [String], _ seen: [String], _ what: String) throws {
        guard expected == seen else {
            throw StepFailure(expected: "\(what) \(expected)", seen: "\(seen)")
        }
    }

    func watchState(_ s: ScenarioStep) async throws -> WatchAppState {
        let w = try watch(s.actor ?? s.watch)
        guard let state = await w.current() else { throw StepFailure(expected: "watch running", seen: "stopped") }
        return state
    }

    /// The text a widget shows: its content lines, then its label, one per line.
    static func text(_ content: WidgetContent) -> String {
        (content.lines + (content.label.map { [$0] } ?? [])).joined(separator: "\n")
    }

    /// A text in double quotes with its line breaks as `\n`, for one-line messages.
    static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    private func expectWidget(_ s: ScenarioStep) async throws {
        let state = try await watchState(s)
        guard let widget = state.widgets.widgets.first(where: { Self.matches(s.widget, $0.id, $0.family) }) else {
            throw StepFailure(
                expected: "a widget '\(s.widget ?? "")'", seen: "\(state.widgets.widgets.map(\.id))")
        }
        let text = Self.text(widget.content)
        if let equals = s.equals, text != equals {
            throw StepFailure(expected: "\(widget.id) text \(Self.quote(equals))", seen: Self.quote(text))
        }
        if let contains = s.contains, !text.contains(contains) {
            throw StepFailure(expected: "\(widget.id) text containing \(Self.quote(contains))", seen: Self.quote(text))
        }
        if let stale = s.stale, widget.isStale != stale {
            throw StepFailure(expected: "\(widget.id) stale=\(stale)", seen: "stale=\(widget.isStale)")
        }
    }

    /// `expectReloads`: exactly `count` reloads (of `widget`, with `reason`) since the mark.
    /// Waits up to `timeout` (default 1 s) for them to arrive, then checks none more came.
    private func expectReloads(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        let want = s.count ?? 0
        let deadline = ContinuousClock.now + .milliseconds(Int((s.timeout ?? 1) * 1000))
        var reloads: [WidgetReload] = []
        repeat {
            reloads = await w.log.sinceMark().compactMap { e -> WidgetReload? in
                guard case .widget(.reloaded(let r)) = e, Self.matches(s.widget, r.widgetID, r.family) else { return nil }
                return r
            }
            if reloads.count >= want { break }
            try await Task.sleep(for: .milliseconds(10))
        } while ContinuousClock.now < deadline
        try await Task.sleep(for: .milliseconds(30))
        reloads = await w.log.sinceMark().compactMap { e -> WidgetReload? in
            guard case .widget(.reloaded(let r)) = e, Self.matches(s.widget, r.widgetID, r.family) else { return nil }
            return r
        }
        let described = reloads.map { "\($0.widgetID):\($0.reasons.map(\.rawValue).joined(separator: "+"))" }
        guard reloads.count == want else {
            throw StepFailure(expected: "\(want) reload(s) since the mark", seen: "\(reloads.count) \(described)")
        }
        if let reason = s.reason, let bad = reloads.first(where: { !$0.reasons.map(\.rawValue).contains(reason) }) {
            throw StepFailure(
                expected: "every reload with reason \(reason)",
                seen: "\(bad.widgetID): \(bad.reasons.map(\.rawValue).joined(separator: "+"))")
        }
    }

    private func expectProfile(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        guard let profile = await w.lastProfile else { throw StepFailure(expected: "an opened profile", seen: "none") }
        let phase = profile.phase
        if let state = s.state, phase.name != state {
            throw StepFailure(expected: "profile \(profile.login) \(state)", seen: "\(phase.name): \(phase)")
        }
        if let code = s.errorCode {
            guard case .failed(let seen, _) = phase, seen.rawValue == code else {
                throw StepFailure(expected: "profile failed with \(code)", seen: "\(phase)")
            }
        }
        let names = profile.visibleList?.list.repos.map(\.name) ?? []
        if let repos = s.repos { try Self.equal(repos, names, "repos") }
        if let count = s.count, names.count != count {
            throw StepFailure(expected: "\(count) repos", seen: "\(names.count)")
        }
        if let stale = s.stale, (profile.visibleList?.isStale ?? false) != stale {
            throw StepFailure(expected: "repo list stale=\(stale)", seen: "stale=\(profile.visibleList?.isStale ?? false)")
        }
    }

    private func expectRelay(_ s: ScenarioStep) async throws {
        // A child relay refreshes the gauges of `/metrics` about once a second.
        let timeout = s.timeout ?? (relayExecutable == nil ? 1 : 3)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let stats = try await relayStats()
            var bad: [String] = []
            if let p = s.pairs, p != stats.pairs { bad.append("pairs \(p)") }
            if let q = s.queued, q != stats.queued { bad.append("queued \(q)") }
            if let c = s.connections, c != stats.connections { bad.append("connections \(c)") }
            if bad.isEmpty { return }
            if ContinuousClock.now >= deadline {
                throw StepFailure(
                    expected: bad.joined(separator: ", "),
                    seen: "pairs \(stats.pairs), queued \(stats.queued), connections \(stats.connections)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
