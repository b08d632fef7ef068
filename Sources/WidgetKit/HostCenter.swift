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
    let widgets: [WidgetInfo]

    init(widgets: [WidgetInfo]) {
        self.widgets = widgets
    }

    /// A scope for one app event, open until ``EventScope/close()``.
    func open() -> EventScope { EventScope(center: self) }

    fileprivate func record(_ kind: String?, scoped: Bool) {
        calls.withLock { c in
            if scoped { c.scoped.append(kind) } else { c.unscoped.append(kind) }
        }
    }

    fileprivate func invalidate() {
        invalidations.withLock { $0 += 1 }
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
}

/// The ``WidgetCenter`` host while one app event runs. A `Task` the event started inherits
/// it; once the event is closed, that task's calls are recorded as unscoped.
final class EventScope: WidgetCenterHost {
    private let center: HostCenter
    private let isOpen = LockedState(true)

    fileprivate init(center: HostCenter) {
        self.center = center
    }

    /// The event's action returned: later calls through this scope are unscoped.
    func close() {
        isOpen.withLock { $0 = false }
    }

    func reloadTimelines(ofKind kind: String?) {
        // Held while recording, so a call racing `close()` is either the event's or unscoped.
        isOpen.withLock { open in center.record(kind, scoped: open) }
    }

    func invalidateConfigurationRecommendations() { center.invalidate() }

    func currentConfigurations() -> [WidgetInfo] { center.widgets }
}
