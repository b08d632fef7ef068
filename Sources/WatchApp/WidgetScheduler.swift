import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// The result of a ``WidgetScheduler/flush(now:favorites:)`` pass: what happened, and when
/// to call `flush` again.
public struct WidgetPass: Sendable, Hashable {
    /// In widget order, and within a widget: reload or stale report, then rendered entry.
    public var events: [WidgetEvent]
    /// When the next pass has work; `nil` when nothing is planned (only a request or a
    /// foreground change can create work).
    public var nextWakeUp: Timestamp?
}

/// The watch's widget system (WidgetKit's scheduler plus `WidgetCenter`) as a value-type state
/// machine: requests in, events out, and the next wake-up date. It never reads a clock and
/// never sleeps: every call takes `now`. The rules are WidgetKit's module's own
/// (``WidgetReloadState``, one per widget); the provider is the favorites widget's
/// ``FavoritesWidgetProvider``, called through WidgetKit's API.
///
/// - `reloadTimelines(ofKind:)` only *requests*: requests are coalesced per widget until the
///   next ``flush(now:favorites:)``, which reloads each widget with a pending request once.
///   The live loop flushes ``WidgetRules/debounce`` (100 ms) after a first request
///   (``nextWakeUp(now:)`` says when), so a burst of requests becomes one reload.
/// - A reload is charged to the widget's own ``ReloadBudget`` unless the app is in the
///   foreground, the no-budget switch is on, or the reload is the widget's first. With no
///   budget left the widget keeps its entries, is stale, and a ``StaleReport`` says so; the
///   scheduler retries when the rolling window frees a slot, or at the next flush once the
///   app is in the foreground.
/// - A `flush` also renders each entry when its date comes, and turns a due `.atEnd` /
///   `.after(date)` policy into a request (never sooner than
///   ``WidgetRules/minimumReloadInterval`` after the last reload).
public struct WidgetScheduler: Sendable {
    /// The budgets, switches and intervals in force.
    public private(set) var rules: WidgetRules
    /// The timeline provider every reload calls.
    public var provider: FavoritesTimelineProvider
    /// The placed widgets, in placement order (the order of events and renderings).
    public private(set) var widgets: [WidgetInstance] = []
    /// Whether the watch app is in the foreground (reloads are free).
    public private(set) var isAppForeground = false

    /// An empty watch: no widgets placed.
    public init(rules: WidgetRules = WidgetRules(), provider: FavoritesTimelineProvider = FavoritesTimelineProvider()) {
        self.rules = rules
        self.provider = provider
    }

    /// A watch with `widgets` placed at `now` (ids must be unique; later duplicates are dropped).
    public init(
        widgets: [WidgetDescriptor], rules: WidgetRules = WidgetRules(),
        provider: FavoritesTimelineProvider = FavoritesTimelineProvider(), now: Timestamp
    ) {
        self.init(rules: rules, provider: provider)
        for d in widgets where widget(d.id) == nil { place(d, now: now) }
    }

    /// The widget with `id`.
    public func widget(_ id: String) -> WidgetInstance? {
        widgets.first { $0.id == id }
    }

    /// Places a widget; its first timeline is requested at once (reason `widgetAdded`).
    public mutating func add(_ descriptor: WidgetDescriptor, now: Timestamp) throws(WatchAppError) {
        guard widget(descriptor.id) == nil else { throw .duplicateWidget(descriptor.id) }
        place(descriptor, now: now)
    }

    private mutating func place(_ descriptor: WidgetDescriptor, now: Timestamp) {
        var instance = WidgetInstance(descriptor: descriptor, rules: rules)
        instance.request(ReloadRequest(reason: .widgetAdded, requestedAt: now.date))
        widgets.append(instance)
    }

    /// Removes a widget from the face or stack.
    public mutating func remove(_ id: String) throws(WatchAppError) {
        guard let i = widgets.firstIndex(where: { $0.id == id }) else { throw .unknownWidget(id) }
        widgets.remove(at: i)
    }

    /// `WidgetCenter.reloadTimelines(ofKind:)`: requests a reload of every widget of `kind`.
    ///
    /// Pass the snapshot's `sentAt` with ``ReloadReason/snapshotReceived`` so the reload
    /// event reports the latency.
    public mutating func reloadTimelines(
        ofKind kind: WidgetKind, reason: ReloadReason = .manual, snapshotSentAt: Timestamp? = nil, now: Timestamp
    ) {
        let request = ReloadRequest(reason: reason, requestedAt: now.date, dataDate: snapshotSentAt?.date)
        for i in widgets.indices where widgets[i].descriptor.kind == kind { widgets[i].request(request) }
    }

    /// `WidgetCenter.reloadAllTimelines()`: requests a reload of every widget.
    public mutating func reloadAllTimelines(
        reason: ReloadReason = .manual, snapshotSentAt: Timestamp? = nil, now: Timestamp
    ) {
        let request = ReloadRequest(reason: reason, requestedAt: now.date, dataDate: snapshotSentAt?.date)
        for i in widgets.indices { widgets[i].request(request) }
    }

    /// Sets a widget's configuration intent and requests its reload (`configurationChanged`).
    public mutating func configure(
        _ id: String, _ configuration: SelectedUserIntent, now: Timestamp
    ) throws(WatchAppError) {
        guard let i = widgets.firstIndex(where: { $0.id == id }) else { throw .unknownWidget(id) }
        widgets[i].configure(configuration)
        widgets[i].request(ReloadRequest(reason: .configurationChanged, requestedAt: now.date))
    }

    /// Records that the watch app entered or left the foreground (reloads are free while in it).
    public mutating func setAppForeground(_ foreground: Bool) {
        isAppForeground = foreground
    }

    /// Turns the `--no-budget` debug switch on or off.
    public mutating func setNoBudget(_ on: Bool) {
        rules.noBudget = on
    }

    /// Runs everything due at `now` for every widget, reading the stored `favorites` for the
    /// reloads: one reload per widget with pending requests (or a stale report), due policy
    /// reloads, and entries whose date has come.
    public mutating func flush(now: Timestamp, favorites: FavoritesSnapshot?) -> WidgetPass {
        var events: [WidgetEvent] = []
        for i in widgets.indices {
            events += widgets[i].flush(
                now: now, favorites: favorites, provider: provider, rules: rules, appForeground: isAppForeground)
        }
        return WidgetPass(events: events, nextWakeUp: nextWakeUp(now: now))
    }

    /// The earliest date at or after `now` when ``flush(now:favorites:)`` has work; `nil` if
    /// none is planned.
    public func nextWakeUp(now: Timestamp) -> Timestamp? {
        widgets.compactMap { $0.nextWakeUp(now: now, rules: rules, appForeground: isAppForeground) }.min()
    }
}
