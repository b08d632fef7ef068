import Foundation
import Primitives

/// The ``WidgetCenter`` host behind a ``WidgetHost`` run: it records the calls, which the
/// host turns into reload requests at the event's virtual time. Each app event gets a scope
/// of its own (``EventScope``), installed as the task-local host while its action runs.
final class HostCenter: Sendable {
    private struct Calls {
        /// One `reloadTimelines(ofKind:)` (a kind) or `reloadAllTimelines()` (`nil`), made
        /// while its event ran.
        var scoped: [String?] = []
        /// Calls made through a scope whose event had ended.
        var unscoped: [String?] = []
    }

    private let calls = LockedState(Calls())
    private let invalidations = LockedState(0)
    /// The kinds of the `invalidateRelevance(ofKind:)` calls, in order.
    private let relevanceInvalidations = LockedState<[String]>([])
    /// The scope of the app event running now, for calls that carry no scope (``RunningHosts``).
    private let openScope = LockedState<EventScope?>(nil)
    let widgets: [WidgetInfo]

    init(widgets: [WidgetInfo]) {
        self.widgets = widgets
    }

    /// A scope for one app event, open until ``EventScope/close()``.
    func open() -> EventScope {
        let scope = EventScope(center: self)
        openScope.withLock { $0 = scope }
        return scope
    }

    fileprivate func closed(_ scope: EventScope) {
        openScope.withLock { if $0 === scope { $0 = nil } }
    }

    fileprivate func record(_ kind: String?, scoped: Bool) {
        calls.withLock { c in
            if scoped { c.scoped.append(kind) } else { c.unscoped.append(kind) }
        }
    }

    fileprivate func invalidate() {
        invalidations.withLock { $0 += 1 }
    }

    fileprivate func invalidateRelevance(_ kind: String) {
        relevanceInvalidations.withLock { $0.append(kind) }
    }

    /// The calls of the event that just ended, in order.
    func drain() -> [String?] {
        calls.withLock { c in
            defer { c.scoped = [] }
            return c.scoped
        }
    }

    /// The calls made through ended events' scopes since the last time.
    func drainUnscoped() -> [String?] {
        calls.withLock { c in
            defer { c.unscoped = [] }
            return c.unscoped
        }
    }

    /// How many times the recommendations were invalidated.
    var invalidationCount: Int { invalidations.withLock { $0 } }

    /// How many times the relevance of widgets of `kind` was invalidated.
    func relevanceInvalidationCount(ofKind kind: String) -> Int {
        relevanceInvalidations.withLock { $0.count { $0 == kind } }
    }
}

/// The ``WidgetCenter`` host while one app event runs. A `Task` the event started inherits
/// it; once the event is closed, that task's calls are recorded as unscoped.
final class EventScope: WidgetCenterHost {
    private let center: HostCenter
    private let isOpen = LockedState(true)
    /// Handlers run through ``later(_:)`` that have not returned yet, and who waits for them.
    private let pending = LockedState(Pending())

    private struct Pending {
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    fileprivate init(center: HostCenter) {
        self.center = center
    }

    /// The event's action returned: later calls through this scope are unscoped.
    func close() {
        isOpen.withLock { $0 = false }
        center.closed(self)
    }

    func reloadTimelines(ofKind kind: String?) {
        // Held while recording, so a call racing `close()` is either the event's or unscoped.
        isOpen.withLock { open in center.record(kind, scoped: open) }
    }

    func invalidateConfigurationRecommendations() { center.invalidate() }

    func invalidateRelevance(ofKind kind: String) { center.invalidateRelevance(kind) }

    func currentConfigurations() -> [WidgetInfo] { center.widgets }

    /// Runs `body` on a global queue with this scope as its host (its calls are the event's),
    /// counted until it returned: ``laterWorkDone()`` waits for it.
    func later(_ body: @escaping @Sendable () -> Void) {
        pending.withLock { $0.count += 1 }
        DispatchQueue.global().async {
            WidgetCenter.$host.withValue(self) { body() }
            let waiters = self.pending.withLock { p -> [CheckedContinuation<Void, Never>] in
                p.count -= 1
                guard p.count == 0 else { return [] }
                defer { p.waiters = [] }
                return p.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once every handler this scope ran ``later(_:)`` has returned (also those that
    /// handlers queued in turn).
    func laterWorkDone() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = pending.withLock { p -> Bool in
                if p.count == 0 { return true }
                p.waiters.append(waiter)
                return false
            }
            if idle { waiter.resume() }
        }
    }
}

extension HostCenter: WidgetCenterHost {
    /// A call with no scope of its own (a dispatch queue, a thread): the running event's if one
    /// is open, else unscoped.
    func reloadTimelines(ofKind kind: String?) {
        openScope.withLock { scope in
            if let scope { scope.reloadTimelines(ofKind: kind) } else { record(kind, scoped: false) }
        }
    }

    func invalidateConfigurationRecommendations() { invalidate() }

    func invalidateRelevance(ofKind kind: String) { invalidateRelevance(kind) }

    func currentConfigurations() -> [WidgetInfo] { widgets }

    /// The running event's, as ``reloadTimelines(ofKind:)``; with none open, on a global queue.
    func later(_ body: @escaping @Sendable () -> Void) {
        if let scope = openScope.withLock({ $0 }) {
            scope.later(body)
        } else {
            DispatchQueue.global().async(execute: body)
        }
    }
}

/// The ``WidgetHost`` runs in progress in this process, for ``WidgetCenter`` calls that carry
/// no task-local host.
enum RunningHosts {
    private static let centers = LockedState<[ObjectIdentifier: HostCenter]>([:])
    private static let warned = LockedState(false)

    static func add(_ center: HostCenter) {
        centers.withLock { $0[ObjectIdentifier(center)] = center }
    }

    static func remove(_ center: HostCenter) {
        centers.withLock { $0[ObjectIdentifier(center)] = nil }
    }

    /// The host a call from a dispatch queue or a thread goes to. A call naming a kind goes to
    /// the running host of that kind, however many others run: a host of another kind is not
    /// its (another test's, or a kind the app misspelt, said on standard error once per kind).
    /// A call naming none goes to the only running host. `nil` when that tells none (warning
    /// once when several could be meant).
    static func host(kind: String? = nil) -> HostCenter? {
        let running = centers.withLock { Array($0.values) }
        guard !running.isEmpty else { return nil }
        guard let kind else {
            if running.count == 1 { return running[0] }
            warnOnce(
                "a WidgetCenter call naming no kind (reloadAllTimelines(), the configurations) from a dispatch "
                    + "queue or a thread while \(running.count) WidgetHosts run in this process: whose it is "
                    + "can't be told, so it does nothing")
            return nil
        }
        let hosting = running.filter { center in center.widgets.contains { $0.kind == kind } }
        if hosting.count == 1 { return hosting[0] }
        if hosting.isEmpty {
            if unhostedKindsSaid.withLock({ $0.insert(kind).inserted }) {
                StandardError.write(
                    "WidgetKit: a WidgetCenter call for kind \"\(kind)\" from a dispatch queue or a thread: no running "
                        + "WidgetHost has widgets of that kind (running: "
                        + Set(running.flatMap { $0.widgets.map(\.kind) }).sorted().joined(separator: ", ")
                        + "), so it does nothing\n")
            }
            return nil
        }
        warnOnce(
            "a WidgetCenter call for kind \"\(kind)\" from a dispatch queue or a thread while \(hosting.count) "
                + "WidgetHosts of that kind run in this process: whose it is can't be told, so it does nothing")
        return nil
    }

    /// The kinds a call named that no running host had, said once each.
    private static let unhostedKindsSaid = LockedState<Set<String>>([])

    private static func warnOnce(_ what: String) {
        guard warned.withLock({ w in defer { w = true }; return !w }) else { return }
        StandardError.write(
            "WidgetKit: \(what). Give parallel tests' hosts kinds of their own, run such tests one at a time "
                + "(swift test --no-parallel), or call from the host's event.\n")
    }
}
