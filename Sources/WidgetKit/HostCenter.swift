import Foundation
import WebSocketTransport

/// The ``WidgetCenter`` a host installs while app code runs: it records the calls, which the
/// host turns into reload requests at the event's virtual time.
final class HostCenter: WidgetCenterHost {
    /// One `reloadTimelines(ofKind:)` (a kind) or `reloadAllTimelines()` (`nil`).
    private let calls = LockedState<[String?]>([])
    private let invalidations = LockedState(0)
    private let widgets: [WidgetInfo]

    init(widgets: [WidgetInfo]) {
        self.widgets = widgets
    }

    func reloadTimelines(ofKind kind: String?) {
        calls.withLock { $0.append(kind) }
    }

    func invalidateConfigurationRecommendations() {
        invalidations.withLock { $0 += 1 }
    }

    func currentConfigurations() -> [WidgetInfo] { widgets }

    /// The calls since the last drain, in order.
    func drain() -> [String?] {
        calls.withLock { c in
            defer { c = [] }
            return c
        }
    }

    /// How many times the recommendations were invalidated.
    var invalidationCount: Int { invalidations.withLock { $0 } }
}
