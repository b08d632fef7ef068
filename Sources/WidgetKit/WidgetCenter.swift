import AppIntents
// As Apple's module: `import WidgetKit` alone gives a file Foundation's names (`Date`, `URL`), so a
// provider in a file of its own that imports only WidgetKit compiles on both.
@_exported import Foundation

/// An object that contains a list of user-configured widgets and is used for reloading
/// widget timelines (WidgetKit's `WidgetCenter`).
///
/// Calls are *requests*, as on a device: the host that runs the app code (``WidgetHost``)
/// coalesces them, charges them to each widget's budget and may refuse them. The host
/// installs itself for the duration of each app event (a task-local value, which `Task {}`
/// inherits), so parallel tests with hosts of their own never see each other's calls. A call
/// made before the event's action returns — synchronous or `async`, in a `Task` it awaited —
/// counts at the event's time. A call from a `Task` the action started but did not await
/// arrives after the event: the host records it as an "unscoped call" app event when it
/// notices it (``AppEventRecord/isUnscoped``).
///
/// A call from outside any Swift task — a dispatch queue (`DispatchQueue.main.async`, a
/// WatchConnectivity delegate's queue) or a `Thread` — goes to a running host: into the event
/// that is running, or else as an unscoped call. `reloadTimelines(ofKind:)` and
/// `invalidateRelevance(ofKind:)` go to the running host of that kind, whatever other hosts run
/// (parallel tests): a kind no running host has does nothing, named on standard error once. The
/// calls that name no kind go to the one host running. When that tells no host (several running,
/// or two of one kind), it does nothing, with a warning on standard error (give parallel tests'
/// hosts kinds of their own, or run them with `swift test --no-parallel`). A call from a
/// task with no host (`Task.detached`, a test of its own) does nothing, like an app whose
/// widgets are not placed: it can't be another test's.
public final class WidgetCenter: Sendable {
    /// The shared widget center.
    public static let shared = WidgetCenter()

    /// The host running the current app event, if any.
    @TaskLocal static var host: (any WidgetCenterHost)?

    private init() {}

    /// The task's host; outside any task, the only host running in the process (or, for a
    /// call naming `kind`, the only running host of that kind).
    private static func target(kind: String? = nil) -> (any WidgetCenterHost)? {
        if let host { return host }
        let inTask = withUnsafeCurrentTask { $0 != nil }
        return inTask ? nil : RunningHosts.host(kind: kind)
    }

    /// Reloads the timelines for all configured widgets of `kind`.
    public func reloadTimelines(ofKind kind: String) {
        Self.target(kind: kind)?.reloadTimelines(ofKind: kind)
    }

    /// Reloads the timelines for all configured widgets of the app.
    public func reloadAllTimelines() {
        Self.target()?.reloadTimelines(ofKind: nil)
    }

    /// Asks the watch to refresh the widgets' `recommendations()` (watchOS); recorded by the host.
    public func invalidateConfigurationRecommendations() {
        Self.target()?.invalidateConfigurationRecommendations()
    }

    /// Asks the system to read the relevance of the widgets of `kind` again (iOS 18, watchOS
    /// 11). Recorded by the host (``WidgetDay/relevanceInvalidated``); the host models no Smart
    /// Stack, so nothing else follows from it (README, "What differs").
    public func invalidateRelevance(ofKind kind: String) {
        Self.target(kind: kind)?.invalidateRelevance(ofKind: kind)
    }

    /// The configured widgets: kind, family and configuration of each instance.
    ///
    /// As on Apple's, `completion` runs later, on a queue of WidgetKit's, never before this
    /// returns: app code that reads a result it set in the handler right after the call sees
    /// it unset here too. Inside a ``WidgetHost`` app event the event lasts until the handler
    /// returned, so what the handler does (a reload) is the event's.
    ///
    /// `@preconcurrency`, as Apple declares it: code not yet checked for concurrency (Swift 5
    /// mode, Xcode 26's default for a new target) may pass a handler that is not `@Sendable`,
    /// and Swift 6 mode says a non-`Sendable` use in the handler with a warning, not an error.
    @preconcurrency
    public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], any Error>) -> Void) {
        let target = Self.target()
        let widgets = target?.currentConfigurations() ?? []
        let call: @Sendable () -> Void = { completion(.success(widgets)) }
        if let target { target.later(call) } else { DispatchQueue.global().async(execute: call) }
    }

    /// The configured widgets: kind, family and configuration of each instance.
    public func currentConfigurations() async throws -> [WidgetInfo] {
        Self.target()?.currentConfigurations() ?? []
    }
}

extension WidgetCenter {
    /// The keys of the user-info dictionary of the user activity a tapped widget opens the app
    /// with (WidgetKit's `WidgetCenter.UserInfoKey`). The host draws widgets and has no taps,
    /// so nothing here fills such a dictionary; the keys exist so that an app's handler
    /// compiles and can be called by a test with a dictionary of its own.
    public struct UserInfoKey: Sendable {
        /// The widget's kind (the `kind` of its configuration).
        public static let kind = "WGWidgetUserInfoKeyKind"
        /// The widget's family.
        public static let family = "WGWidgetUserInfoKeyFamily"
        /// The activity's id, when the widget is a Live Activity.
        public static let activityID = "WGWidgetUserInfoKeyActivityID"
    }
}

/// What ``WidgetCenter`` forwards to the host running the app code.
protocol WidgetCenterHost: Sendable {
    /// A reload request for `kind`, or for every widget when `nil`.
    func reloadTimelines(ofKind kind: String?)
    /// `invalidateConfigurationRecommendations()` was called.
    func invalidateConfigurationRecommendations()
    /// `invalidateRelevance(ofKind:)` was called.
    func invalidateRelevance(ofKind kind: String)
    /// The placed widget instances.
    func currentConfigurations() -> [WidgetInfo]
    /// Runs `body` as WidgetKit runs a completion handler: on a queue of its own, after the
    /// call that asked for it returned. An app event waits for it before it ends.
    func later(_ body: @escaping @Sendable () -> Void)
}

/// One configured widget instance (WidgetKit's `WidgetInfo`).
public struct WidgetInfo: Sendable, CustomStringConvertible {
    /// The widget's kind string.
    public let kind: String
    /// The instance's family.
    public let family: WidgetFamily
    /// The instance's configuration intent, for intent-configured widgets.
    public let configuration: (any WidgetConfigurationIntent)?

    /// An instance of `kind` in `family`, configured with `configuration`.
    public init(kind: String, family: WidgetFamily, configuration: (any WidgetConfigurationIntent)? = nil) {
        self.kind = kind
        self.family = family
        self.configuration = configuration
    }

    /// The configuration as `Intent`, if it is one.
    public func widgetConfigurationIntent<Intent: WidgetConfigurationIntent>(of type: Intent.Type = Intent.self)
        -> Intent?
    {
        configuration as? Intent
    }

    public var description: String { "\(kind) \(family)" }
}
