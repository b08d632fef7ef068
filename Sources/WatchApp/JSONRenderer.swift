import RelayProtocol
import WidgetKit

/// Renders the watch as JSON for scripts and tests: every widget with its content in every
/// family, its entries, generation, staleness and budget; the favorites; the profile screen;
/// and widget events.
///
/// Deterministic: keys are sorted by ``JSONWriter``, arrays keep the model's order, numbers
/// are integers and dates ISO-8601 UTC.
public enum JSONRenderer {
    /// The whole watch at `now`.
    public static func json(_ state: WatchAppState, now: Timestamp) -> JSONValue {
        var o = ObjectBuilder()
        o["widgets"] = json(state.widgets, now: now)
        o["favorites"] = json(state.favorites)
        o["profile"] = state.profile.map { json($0, now: now) } ?? .null
        return o.json
    }

    /// The whole watch at `now` as compact JSON text.
    public static func render(_ state: WatchAppState, now: Timestamp) -> String {
        String(decoding: JSONWriter.encode(json(state, now: now)), as: UTF8.self)
    }

    /// The widget system at `now`.
    public static func json(_ scheduler: WidgetScheduler, now: Timestamp) -> JSONValue {
        var o = ObjectBuilder()
        o.set("now", now)
        o.set("appForeground", scheduler.isAppForeground)
        o.set("noBudget", scheduler.rules.noBudget)
        o.set("nextWakeUp", scheduler.nextWakeUp(now: now))
        o["widgets"] = .array(scheduler.widgets.map { json($0, rules: scheduler.rules, now: now) })
        return o.json
    }

    /// One widget at `now`.
    public static func json(_ widget: WidgetInstance, rules: WidgetRules, now: Timestamp) -> JSONValue {
        let d = widget.descriptor
        var o = ObjectBuilder()
        o.set("id", d.id)
        o.set("kind", d.kind)
        o.set("family", d.family)
        o.set("placement", d.placement)
        o.set("generation", widget.generation)
        o.set("stale", widget.isStale)
        o["configuration"] = ["login": d.configuration.login.map(JSONValue.string) ?? .null]
        var budget = ObjectBuilder()
        budget.set("limit", widget.budget.limit)
        budget.set("used", widget.budget.used(at: now))
        budget.set("left", widget.budget.remaining(at: now))
        budget.set("windowSeconds", Int64(widget.budget.window))
        budget.set("enforced", !rules.noBudget)
        budget.set("nextAvailable", widget.budget.nextAvailable(at: now))
        o["budget"] = budget.json
        o["content"] = json(widget.content)
        var families = ObjectBuilder()
        for f in WidgetFamily.favoritesFamilies { families[f.rawValue] = json(widget.content(as: f)) }
        o["families"] = families.json
        o.set("displayedIndex", widget.displayedIndex)
        o["entries"] = .array((widget.timeline?.entries ?? []).map(json))
        o["policy"] = widget.timeline.map { json($0.policy) } ?? .null
        o.set("nextPolicyReloadAt", widget.policyReloadDate(rules: rules))
        o.set("lastReloadAt", widget.lastReloadAt)
        if let p = widget.pending {
            var pending = ObjectBuilder()
            pending["reasons"] = .array(p.reasons.map { .string($0.rawValue) })
            pending.set("requestCount", p.requestCount)
            pending.set("firstRequestedAt", Timestamp(p.firstRequestedAt))
            pending.set("deferred", p.isDeferred)
            o["pending"] = pending.json
        } else {
            o["pending"] = .null
        }
        return o.json
    }

    /// A family's content.
    public static func json(_ c: WidgetContent) -> JSONValue {
        var o = ObjectBuilder()
        o.set("family", c.family)
        o["lines"] = .array(c.lines.map(JSONValue.string))
        o.set("label", c.label)
        o["gauge"] = c.gauge.map { ["value": .int(Int64($0.value)), "total": .int(Int64($0.total))] } ?? .null
        o.set("redacted", c.isRedacted)
        o.set("empty", c.isEmpty)
        return o.json
    }

    /// A timeline entry: `favoritesCount` is the phone's count of favorites, of which
    /// `omitted` are on the phone only (the snapshot left them out, PROTOCOL.md §12.2).
    public static func json(_ e: FavoritesEntry) -> JSONValue {
        var o = ObjectBuilder()
        o.set("date", e.timestamp)
        o.set("content", e.contentKind)
        o.set("login", e.user?.login)
        o.set("position", e.position)
        o.set("favoritesCount", e.favoritesCount)
        o.set("omitted", e.omitted)
        o.set("revision", e.revision)
        o.set("selectionFellBack", e.selectionFellBack)
        return o.json
    }

    /// A reload policy: `{"type": "atEnd"}`, `{"type": "after", "date": …}`, `{"type": "never"}`.
    public static func json(_ p: ReloadPolicy) -> JSONValue {
        if case .after(let date) = p { return ["type": "after", "date": .string(date.iso8601)] }
        return ["type": .string(p.name)]
    }

    /// A widget event, with `type` `reloaded`, `stale` or `rendered`.
    public static func json(_ event: WidgetEvent) -> JSONValue {
        var o = ObjectBuilder()
        switch event {
        case .reloaded(let r):
            o.set("type", "reloaded")
            o.set("widget", r.widgetID)
            o.set("kind", r.kind)
            o.set("family", r.family)
            o.set("generation", r.generation)
            o.set("reason", r.reason)
            o["reasons"] = .array(r.reasons.map { .string($0.rawValue) })
            o.set("requestCount", r.requestCount)
            o.set("requestedAt", r.requestedAt)
            o.set("at", r.at)
            o["entries"] = .array(r.entries.map(json))
            o["policy"] = json(r.policy)
            o.set("latencyMs", r.latencyMilliseconds)
            o.set("charged", r.charged)
            o.set("budgetLeft", r.budgetLeft)
        case .stale(let s):
            o.set("type", "stale")
            o.set("widget", s.widgetID)
            o.set("kind", s.kind)
            o.set("family", s.family)
            o.set("generation", s.generation)
            o.set("reason", s.reason)
            o["reasons"] = .array(s.reasons.map { .string($0.rawValue) })
            o.set("requestCount", s.requestCount)
            o.set("at", s.at)
            o.set("retryAt", s.retryAt)
            o.set("budgetLimit", s.budgetLimit)
        case .rendered(let e):
            o.set("type", "rendered")
            o.set("widget", e.widgetID)
            o.set("family", e.family)
            o.set("generation", e.generation)
            o.set("index", e.index)
            o.set("entryDate", e.entryDate)
            o.set("at", e.at)
            o["content"] = json(e.content)
        }
        return o.json
    }

    /// The favorites list with pending deletes: `users` are the ones the watch got, `omitted`
    /// the ones the phone left out after them because its whole list did not fit the relay's
    /// limit (0 when the watch has the whole list; the list goes on on the phone, PROTOCOL.md
    /// §12.2), `total` the phone's count (`users` and `omitted`).
    public static func json(_ f: FavoritesViewModel) -> JSONValue {
        var o = ObjectBuilder()
        o.set("revision", f.snapshot?.revision)
        o.set("omitted", f.omitted)
        o.set("total", f.total)
        o["users"] = .array(
            f.rows.map { row in ["login": .string(row.user.login), "pendingDelete": .bool(row.isPendingDelete)] })
        o["pendingDeletes"] = .array(f.pendingDeletes.map(JSONValue.string))
        return o.json
    }

    /// The profile screen at `now` (ages are relative to it).
    public static func json(_ p: ProfileDetail, now: Timestamp) -> JSONValue {
        var o = ObjectBuilder()
        o.set("login", p.login)
        o.set("phase", p.phase.name)
        o.set("status", p.statusMessage)
        switch p.phase {
        case .failed(let code, _): o.set("errorCode", code)
        case .loaded(let list): o.set("staleReason", list.stale?.code)
        case .offline(let reason, _): o.set("offlineReason", reason.rawValue)
        default: break
        }
        if let (list, stale) = p.visibleList {
            o.set("stale", stale)
            o.set("fetchedAt", list.fetchedAt)
            o["repos"] = .array(
                list.rows(now: now).map { r in
                    [
                        "name": .string(r.name), "stars": .string(r.stars), "language": .string(r.language),
                        "updated": .string(r.updated), "fork": .bool(r.isFork),
                    ]
                })
        } else {
            o.set("stale", false)
            o["repos"] = .array([])
        }
        return o.json
    }
}
