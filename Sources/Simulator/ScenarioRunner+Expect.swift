import Foundation
import PhoneApp
import RelayProtocol
import WatchApp
import WidgetKit

extension ScenarioRunner {
    // MARK: - Waiting

    /// `wait`: the next `count` (default 1) matching events of a watch, within `timeout`.
    func wait(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        let event = s.event ?? "snapshot"
        let widget = s.widget
        let pick: @Sendable (WatchObservation) -> Bool
        switch event {
        case "snapshot":
            let revision = s.revision
            let logins = s.favorites
            pick = {
                guard case .snapshot(let r, let l) = $0 else { return false }
                return (revision == nil || r == revision) && (logins == nil || l == logins)
            }
        case "reload":
            let reason = s.reason
            pick = {
                guard case .reloaded(let id, let family, _, let reasons) = $0 else { return false }
                return Self.matches(widget, id, family) && (reason == nil || reasons.contains(reason!))
            }
        case "stale":
            pick = { if case .stale(let id, let family) = $0 { Self.matches(widget, id, family) } else { false } }
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
        case "companionAppInstalled", "companionAppUninstalled":
            let want = event == "companionAppInstalled"
            pick = { $0 == .companionAppInstalled(want) }
        default:
            throw StepFailure(expected: "an event (\(ScenarioStep.waitEvents.joined(separator: ", ")))", seen: "'\(event)'")
        }
        let count = s.count ?? 1
        let (found, seen, passed, marked) = await w.log.waitFor(count, timeout: s.timeout ?? 3, pick)
        if found.count < count {
            var earlier =
                passed.isEmpty
                ? ""
                : "; an earlier wait already moved past \(passed.count == 1 ? "a matching event" : "matching events"): "
                    + "[\(passed.map(\.summary).joined(separator: ", "))] (waits take events in the order they came)"
            if !marked.isEmpty {
                earlier += "; the last mark moved past \(marked.count == 1 ? "a matching event" : "matching events"): "
                    + "[\(marked.map(\.summary).joined(separator: ", "))] (a wait looks after the mark: mark before the step that causes it)"
            }
            throw StepFailure(
                expected: "\(count) × \(event)\(s.revision.map { " \($0)" } ?? "")\(s.favorites.map { " \($0)" } ?? "") within \(s.timeout ?? 3) s",
                seen: "\(found.count); recent events: [\(seen.map(\.summary).joined(separator: ", "))]\(earlier)")
        }
    }

    /// Whether a widget (id `face.circular`, family `circular` or `accessoryCircular`) is meant;
    /// `family` is the family's raw value.
    nonisolated static func matches(_ wanted: String?, _ id: String, _ family: String) -> Bool {
        guard let wanted else { return true }
        return wanted == id || wanted == family || wanted == WidgetFamily(rawValue: family)?.shortName
    }

    // MARK: - Expectations

    func expect(_ action: ScenarioAction, _ s: ScenarioStep) async throws {
        switch action {
        case .expectWidget: try await expectWidget(s)
        case .expectReloads: try await expectReloads(s)
        case .expectProfile: try await expectProfile(s)
        case .expectPhoneFavorites:
            let seen = try await phone(s.actor ?? s.phone).favorites()
            try Self.equal(s.favorites ?? [], seen, "phone favorites")
        case .expectWatchFavorites:
            let view = try await watch(s.actor ?? s.watch).view()
            try Self.equal(s.favorites ?? [], view.favorites, "watch favorites")
            if let pending = s.pending { try Self.equal(pending, view.pending, "pending deletes") }
            if let omitted = s.omitted, omitted != view.omitted {
                throw StepFailure(expected: "\(omitted) favorites on the phone only", seen: "\(view.omitted)")
            }
        case .expectGitHub: try expectGitHub(s)
        case .expectPhoneStatus: try await expectPhoneStatus(s)
        default: try await expectRelay(s)
        }
    }

    /// `expectPhoneStatus`: the phone's `status` says what the step gives, now or within
    /// `timeout` (default 3 s: the relay tells the phone of an app uninstalled or installed
    /// again once it stored it).
    private func expectPhoneStatus(_ s: ScenarioStep) async throws {
        let p = try phone(s.actor ?? s.phone)
        let deadline = ContinuousClock.now + .milliseconds(Int((s.timeout ?? 3) * 1000))
        let wantedError = s.pushError.map { $0 == "none" ? nil : $0 }
        while true {
            let seen = try await p.status()
            let installedOK = s.watchAppInstalled.map { $0 == seen.watchAppInstalled } ?? true
            let errorOK = wantedError.map { $0 == seen.pushError } ?? true
            if installedOK && errorOK { return }
            guard ContinuousClock.now < deadline else {
                let expected = [
                    s.watchAppInstalled.map { "watchAppInstalled=\($0)" }, s.pushError.map { "pushError=\($0)" },
                ].compactMap { $0 }
                throw StepFailure(
                    expected: expected.joined(separator: " "),
                    seen: "watchAppInstalled=\(seen.watchAppInstalled) pushError=\(seen.pushError ?? "none")")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func equal(_ expected: [String], _ seen: [String], _ what: String) throws {
        guard expected == seen else {
            throw StepFailure(expected: "\(what) \(expected)", seen: "\(seen)")
        }
    }

    /// A text in double quotes with its line breaks as `\n`, for one-line messages.
    static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    private func expectWidget(_ s: ScenarioStep) async throws {
        let view = try await watch(s.actor ?? s.watch).view()
        guard let widget = view.widgets.first(where: { Self.matches(s.widget, $0.id, $0.family) }) else {
            throw StepFailure(expected: "a widget '\(s.widget ?? "")'", seen: "\(view.widgets.map(\.id))")
        }
        let text = widget.text
        if let equals = s.equals, text != equals {
            throw StepFailure(expected: "\(widget.id) text \(Self.quote(equals))", seen: Self.quote(text))
        }
        if let contains = s.contains, !text.contains(contains) {
            throw StepFailure(expected: "\(widget.id) text containing \(Self.quote(contains))", seen: Self.quote(text))
        }
        if let stale = s.stale, widget.stale != stale {
            throw StepFailure(expected: "\(widget.id) stale=\(stale)", seen: "stale=\(widget.stale)")
        }
    }

    /// `expectReloads`: exactly `count` reloads (of `widget`, with `reason`) since the mark.
    /// Waits up to `timeout` (default 1 s) for them to arrive, then checks none more came.
    private func expectReloads(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        let want = s.count ?? 0
        let deadline = ContinuousClock.now + .milliseconds(Int((s.timeout ?? 1) * 1000))
        let widget = s.widget
        let reloadsSinceMark = { () -> [(id: String, reasons: [String])] in
            w.log.sinceMark().compactMap { e -> (id: String, reasons: [String])? in
                guard case .reloaded(let id, let family, _, let reasons) = e, Self.matches(widget, id, family) else { return nil }
                return (id, reasons)
            }
        }
        var logged = w.log.count
        var reloads = reloadsSinceMark()
        while reloads.count < want && ContinuousClock.now < deadline {
            await w.log.changed(after: logged, until: deadline)
            logged = w.log.count
            reloads = reloadsSinceMark()
        }
        // Every watch command returns after the events it caused are logged; a reload can still
        // come in on its own from a snapshot the relay holds (one too many): awaited, once the
        // watch handled everything the relay holds for it. A stopped watch receives nothing.
        if await w.isRunning { try await w.caughtUp() }
        reloads = reloadsSinceMark()
        let described = reloads.map { "\($0.id):\($0.reasons.joined(separator: "+"))" }
        guard reloads.count == want else {
            throw StepFailure(expected: "\(want) reload(s) since the mark", seen: "\(reloads.count) \(described)")
        }
        if let reason = s.reason, let bad = reloads.first(where: { !$0.reasons.contains(reason) }) {
            throw StepFailure(
                expected: "every reload with reason \(reason)", seen: "\(bad.id): \(bad.reasons.joined(separator: "+"))")
        }
    }

    private func expectProfile(_ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        guard let profile = await w.lastProfile else { throw StepFailure(expected: "an opened profile", seen: "none") }
        if let state = s.state, profile.phase != state {
            throw StepFailure(expected: "profile \(profile.login) \(state)", seen: profile.summary)
        }
        if let code = s.errorCode, profile.phase != "failed" || profile.errorCode != code {
            throw StepFailure(expected: "profile failed with \(code)", seen: profile.summary)
        }
        if let message = s.message, !(profile.message ?? "").contains(message) {
            throw StepFailure(expected: "the screen saying \(Self.quote(message))", seen: profile.summary)
        }
        if let repos = s.repos { try Self.equal(repos, profile.repos, "repos") }
        if let count = s.count, profile.repos.count != count {
            throw StepFailure(expected: "\(count) repos", seen: "\(profile.repos.count)")
        }
        if let stale = s.stale, profile.stale != stale {
            throw StepFailure(expected: "repo list stale=\(stale)", seen: "stale=\(profile.stale)")
        }
    }

    /// `expectGitHub`: the fixture server answered `status` exactly `count` times (default: at
    /// least once) since it started.
    private func expectGitHub(_ s: ScenarioStep) throws {
        guard let status = s.status else { throw StepFailure(expected: "a 'status' field", seen: "none") }
        let counters = try runningGitHub().counters
        let seen = counters.count(status: status)
        let statuses = counters.statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
        if s.count.map({ seen != $0 }) ?? (seen == 0) {
            throw StepFailure(
                expected: "GitHub answered \(status) \(s.count.map { "\($0) time(s)" } ?? "at least once")",
                seen: "\(seen) (responses: \(statuses))")
        }
    }

    /// `expectRelay`: the relay's counters match, now or after a change within `timeout`
    /// (awaited: the console's `state` events over sockets, the relay's own changes in memory).
    private func expectRelay(_ s: ScenarioStep) async throws {
        guard let relay else { throw StepFailure(expected: "the relay running", seen: "stopped") }
        let (pairs, queued, connections) = (s.pairs, s.queued, s.connections)
        let (matched, last) = try await relay.awaitCounters(within: s.timeout ?? (childExecutable == nil ? 1 : 3), consoleToken: consoleToken) { c in
            pairs.map { $0 == c.pairs } ?? true && queued.map { $0 == c.queued } ?? true
                && connections.map { $0 == c.connections } ?? true
        }
        guard matched == nil else { return }
        var wanted: [String] = []
        if let p = pairs { wanted.append("pairs \(p)") }
        if let q = queued { wanted.append("queued \(q)") }
        if let c = connections { wanted.append("connections \(c)") }
        throw StepFailure(expected: wanted.joined(separator: ", "), seen: last?.description ?? "no state from the relay")
    }
}
