import RelayProtocol
import WatchApp

/// Something a scenario's watch did, as the runner sees it: from a ``WatchEvent`` of a watch
/// in this process, or from an event line of a `watchrelay watch --machine` child.
enum WatchObservation: Sendable, Hashable {
    case activated(paired: Bool)
    case disconnected
    case paired(peer: String)
    case reachability(Bool)
    /// The iPhone app was uninstalled (false) or runs again (true).
    case companionAppInstalled(Bool)
    case snapshot(revision: Int64, logins: [String])
    case deleteAccepted(login: String)
    case deleteCompleted(login: String)
    /// A widget reloaded: its id, family (raw value), generation and coalesced reasons.
    case reloaded(widget: String, family: String, generation: Int, reasons: [String])
    /// A reload refused for budget.
    case stale(widget: String, family: String)
    case rendered(widget: String)
    case profile(login: String, phase: String)
    case error(String)

    /// The observation of an in-process watch's event.
    init(_ event: WatchEvent) {
        switch event {
        case .activated(let paired): self = .activated(paired: paired)
        case .disconnected: self = .disconnected
        case .paired(let peer): self = .paired(peer: peer)
        case .reachability(let r): self = .reachability(r)
        case .companionAppInstalled(let installed): self = .companionAppInstalled(installed)
        case .snapshotStored(let revision, let logins, _): self = .snapshot(revision: revision, logins: logins)
        case .deleteAccepted(let login): self = .deleteAccepted(login: login)
        case .deleteCompleted(let login): self = .deleteCompleted(login: login)
        case .profile(let p): self = .profile(login: p.login, phase: p.phase.name)
        case .error(let failure): self = .error(failure.message)
        case .widget(.reloaded(let r)):
            self = .reloaded(
                widget: r.widgetID, family: r.family.rawValue, generation: r.generation, reasons: r.reasons.map(\.rawValue))
        case .widget(.stale(let s)): self = .stale(widget: s.widgetID, family: s.family.rawValue)
        case .widget(.rendered(let e)): self = .rendered(widget: e.widgetID)
        }
    }

    /// The observation of a child's event line (`event` and its fields); nil for events the
    /// scenarios do not look at.
    init?(event name: String, _ o: [String: JSONValue]) {
        func string(_ key: String) -> String { o[key]?.stringValue ?? "" }
        switch name {
        case "activated": self = .activated(paired: o["paired"]?.boolValue ?? false)
        case "disconnected": self = .disconnected
        case "paired": self = .paired(peer: string("peer"))
        case "reachability": self = .reachability(o["reachable"]?.boolValue ?? false)
        case "companionAppInstalled": self = .companionAppInstalled(o["installed"]?.boolValue ?? true)
        case "snapshot":
            self = .snapshot(
                revision: o["revision"]?.intValue ?? 0, logins: (o["favorites"]?.arrayValue ?? []).compactMap(\.stringValue))
        case "deleteAccepted": self = .deleteAccepted(login: string("login"))
        case "deleteCompleted": self = .deleteCompleted(login: string("login"))
        case "profile":
            let p = o["profile"]?.objectValue ?? [:]
            self = .profile(login: p["login"]?.stringValue ?? "", phase: p["phase"]?.stringValue ?? "")
        case "error": self = .error(string("message"))
        case "reloaded":
            self = .reloaded(
                widget: string("widget"), family: string("family"), generation: Int(o["generation"]?.intValue ?? 0),
                reasons: (o["reasons"]?.arrayValue ?? []).compactMap(\.stringValue))
        case "stale": self = .stale(widget: string("widget"), family: string("family"))
        case "rendered": self = .rendered(widget: string("widget"))
        default: return nil
        }
    }

    /// A short line for failure messages.
    var summary: String {
        switch self {
        case .activated(let paired): "activated(paired: \(paired))"
        case .disconnected: "disconnected"
        case .paired(let peer): "paired(\(peer))"
        case .reachability(let r): r ? "reachable" : "unreachable"
        case .companionAppInstalled(let installed): installed ? "companionAppInstalled" : "companionAppUninstalled"
        case .snapshot(let revision, let logins): "snapshot(\(revision): \(logins.joined(separator: ",")))"
        case .deleteAccepted(let login): "deleteAccepted(\(login))"
        case .deleteCompleted(let login): "deleteCompleted(\(login))"
        case .profile(let login, let phase): "profile(\(login): \(phase))"
        case .reloaded(let widget, _, _, let reasons): "reload(\(widget): \(reasons.joined(separator: ",")))"
        case .stale(let widget, _): "stale(\(widget))"
        case .rendered(let widget): "rendered(\(widget))"
        case .error(let message): "error(\(message))"
        }
    }
}

/// What a scenario checks of a watch's screen: its widgets and favorites.
struct WatchView: Sendable, Hashable {
    /// One widget: id, family (raw value), its text (content lines, then label) and staleness.
    struct Widget: Sendable, Hashable {
        var id: String
        var family: String
        var text: String
        var stale: Bool
    }

    var widgets: [Widget]
    /// The stored favorites, in order.
    var favorites: [String]
    /// The logins pending delete.
    var pending: [String]
    /// The favorites the phone left out after ``favorites`` (the snapshot's `omitted`).
    var omitted: Int

    /// The view of an in-process watch's state.
    init(_ state: WatchAppState) {
        widgets = state.widgets.widgets.map {
            Widget(id: $0.id, family: $0.family.rawValue, text: Self.text($0.content), stale: $0.isStale)
        }
        favorites = state.favorites.users.map(\.login)
        pending = state.favorites.pendingDeletes
        omitted = state.favorites.omitted
    }

    /// The view of a child's `state` answer (``JSONRenderer/json(_:now:)`` of the watch).
    init(json: JSONValue) throws {
        guard let state = json.objectValue, let scheduler = state["widgets"]?.objectValue,
            let list = scheduler["widgets"]?.arrayValue, let favorites = state["favorites"]?.objectValue
        else { throw StepFailure(expected: "the watch's state as JSON", seen: "\(json)") }
        widgets = list.compactMap { $0.objectValue }.map { w in
            let content = w["content"]?.objectValue ?? [:]
            let lines = (content["lines"]?.arrayValue ?? []).compactMap(\.stringValue)
            let label = content["label"]?.stringValue.map { [$0] } ?? []
            return Widget(
                id: w["id"]?.stringValue ?? "", family: w["family"]?.stringValue ?? "",
                text: (lines + label).joined(separator: "\n"), stale: w["stale"]?.boolValue ?? false)
        }
        self.favorites = (favorites["users"]?.arrayValue ?? []).compactMap { $0["login"]?.stringValue }
        pending = (favorites["pendingDeletes"]?.arrayValue ?? []).compactMap(\.stringValue)
        omitted = Int(favorites["omitted"]?.intValue ?? 0)
    }

    /// The text a widget shows: its content lines, then its label, one per line.
    static func text(_ content: WidgetContent) -> String {
        (content.lines + (content.label.map { [$0] } ?? [])).joined(separator: "\n")
    }
}

/// The profile screen of a watch's last `open`.
struct ProfileView: Sendable, Hashable {
    var login: String
    /// `idle`, `loading`, `loaded`, `failed` or `offline`.
    var phase: String
    /// For `failed`: the code, e.g. `user_not_found`.
    var errorCode: String?
    /// The status line the screen shows (the error in words, `Phone not reachable`…).
    var message: String?
    /// The repo names on screen, in order.
    var repos: [String]
    /// Whether the list on screen is stale (cached).
    var stale: Bool

    /// The view of an in-process screen.
    init(_ p: ProfileDetail) {
        login = p.login
        phase = p.phase.name
        if case .failed(let code, _) = p.phase { errorCode = code.rawValue }
        message = p.statusMessage
        repos = p.visibleList?.list.repos.map(\.name) ?? []
        stale = p.visibleList?.isStale ?? false
    }

    /// The view of a child's screen (``JSONRenderer/json(_:now:)`` of the profile).
    init(json: JSONValue) throws {
        guard let p = json.objectValue, let login = p["login"]?.stringValue, let phase = p["phase"]?.stringValue else {
            throw StepFailure(expected: "a profile screen as JSON", seen: "\(json)")
        }
        self.login = login
        self.phase = phase
        errorCode = p["errorCode"]?.stringValue
        message = p["status"]?.stringValue
        repos = (p["repos"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        stale = p["stale"]?.boolValue ?? false
    }

    /// The screen in one line, for failure messages.
    var summary: String {
        var parts = ["\(login) \(phase)"]
        if let errorCode { parts.append(errorCode) }
        if let message { parts.append("\"\(message)\"") }
        parts.append("\(repos.count) repos\(stale ? " (stale)" : "")")
        return parts.joined(separator: ", ")
    }
}
