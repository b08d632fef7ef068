import WatchApp

/// Which of a step's fields its action reads, checked when the file loads: a field the action
/// does not read (a `favorites` on a `wait` for `deleteCompleted`, a `count` on a `down` fault,
/// an `equals` on `expectReloads`) was ignored, and the step passed without checking what the
/// file says. Likewise a `widget` no watch has: `expectReloads` of it counted none and passed.
extension ScenarioStep {
    /// The fields every step may carry: what it does, whose step it is, the error it must fail with.
    static let commonFields: Set<String> = ["action", "actor", "expectError"]

    /// The fields `action` reads besides ``commonFields`` (for a `wait`, a `fault` and a
    /// `linkFault`: of its event or kind).
    func readFields(_ action: ScenarioAction) -> Set<String> {
        switch action {
        case .start, .reconnect, .restart: ["kind", "budget", "foreground", "reposMaxAge", "contextBytes"]
        case .stop, .kill, .disconnect, .uninstallApp: ["kind"]
        case .pair: ["phone", "watch", "code", "delay"]
        case .switchWatch: ["phone", "watch"]
        case .add, .remove: ["phone", "login", "sync"]
        case .move: ["phone", "login", "index", "sync"]
        case .refresh: ["phone"]
        case .delete, .open, .select: ["watch", "login"]
        case .foreground, .background, .mark: ["watch"]
        case .advance: ["watch", "seconds"]
        case .wait: waitFilters.union(["watch", "event", "count", "timeout"])
        case .sleep: ["seconds"]
        // A rate limit counts every request: its `login` is refused with its own reason. Its
        // `seconds` is the window (`rateLimit`) or `Retry-After` (`secondaryRateLimit`).
        case .fault:
            switch fault {
            case "rateLimit": ["fault", "count", "login", "seconds"]
            case "secondaryRateLimit": ["fault", "login", "seconds"]
            default: ["fault", "login"]
            }
        case .linkFault: linkFaultParameters.union(["fault", "target"])
        case .expectWidget: ["watch", "widget", "equals", "contains", "stale"]
        case .expectReloads: ["watch", "count", "widget", "reason", "timeout"]
        case .expectProfile: ["watch", "state", "errorCode", "message", "repos", "count", "stale"]
        case .expectPhoneFavorites: ["phone", "favorites"]
        case .expectWatchFavorites: ["watch", "favorites", "pending", "omitted"]
        case .expectRelay: ["pairs", "queued", "connections", "timeout"]
        case .expectGitHub: ["status", "count"]
        case .expectPhoneStatus: ["phone", "watchAppInstalled", "pushError", "timeout"]
        }
    }

    /// The filters of a `wait` for its event (default `snapshot`).
    private var waitFilters: Set<String> {
        switch event ?? "snapshot" {
        case "snapshot": ["revision", "favorites"]
        case "reload": ["widget", "reason"]
        case "stale": ["widget"]
        case "deleteAccepted", "deleteCompleted": ["login"]
        default: []
        }
    }

    /// The parameter of a link fault's kind (the relay's console ignores the others).
    private var linkFaultParameters: Set<String> {
        switch fault {
        case "flap", "delay", "slow-writes": ["ms"]
        case "drop": ["p"]
        case "complication-budget": ["left"]
        default: []
        }
    }

    /// The fields this step has (its non-nil properties: the JSON keys it was given).
    var givenFields: [String] {
        Mirror(reflecting: self).children.compactMap { child in
            let value = Mirror(reflecting: child.value)
            return value.displayStyle == .optional && value.children.isEmpty ? nil : child.label
        }
    }

    /// A field given that `action` does not read, an actor's name that is not one, a kind that is
    /// not a phone's or a watch's, or a widget no watch has, said; or nil.
    func fieldProblem(_ action: ScenarioAction) -> String? {
        let reads = Self.commonFields.union(readFields(action))
        if let field = givenFields.first(where: { !reads.contains($0) }) {
            return "'\(field)' does not apply to \(appliesTo(action)) (it would be ignored); "
                + "its fields: \(reads.subtracting(["action"]).sorted().joined(separator: ", "))"
        }
        for (field, name) in [("actor", actor), ("phone", phone), ("watch", watch)] {
            if let name, !Self.isValidActorName(name) {
                return "\(field) '\(name)' is not a name: 1-64 of A-Z a-z 0-9 . _ -, not . or .. "
                    + "(a phone's or a watch's state directory in the run's directory, and the phone's --watch id)"
            }
        }
        if let kind, kind != "phone", kind != "watch" { return "kind '\(kind)' is not one of phone, watch" }
        if let widget, !WidgetDescriptor.standard.contains(where: { ScenarioRunner.matches(widget, $0.id, $0.family.rawValue) }) {
            return "widget '\(widget)' is not one of the watch's: \(Self.widgetNames.joined(separator: ", "))"
        }
        return nil
    }

    /// A `budget` or `foreground` (a watch's) on the start of an actor known not to be a watch,
    /// a `reposMaxAge` (a phone's) on one known not to be a phone, or a `contextBytes` (the
    /// relay's) on another actor's, said; or nil. `kinds` holds
    /// each actor's kind as its first start made it (the runner's rule: the kind given then, else
    /// the name's start), and gets this step's if it is the actor's first start; an actor whose
    /// kind is not known here fails its step when it runs.
    func startProblem(kinds: inout [String: String]) -> String? {
        guard let action = ScenarioAction(rawValue: action), [.start, .restart, .reconnect].contains(action),
            let name = actor
        else { return nil }
        if kinds[name] == nil { kinds[name] = Self.kindAtLoad(of: name, given: kind) }
        guard let known = kinds[name], let (field, owner) = misplacedStartField(known) else { return nil }
        return "'\(field)' applies to \(Self.whose(owner)) start only, not \(Self.whose(known)) (it would be ignored)"
    }

    /// The first start field given that an actor of `kind` does not read, and the kind that
    /// reads it; or nil.
    func misplacedStartField(_ kind: String) -> (field: String, owner: String)? {
        let kindOnly = [
            ("budget", "watch", budget != nil), ("foreground", "watch", foreground != nil),
            ("reposMaxAge", "phone", reposMaxAge != nil), ("contextBytes", "relay", contextBytes != nil),
        ]
        return kindOnly.first { $0.2 && $0.1 != kind }.map { ($0.0, $0.1) }
    }

    /// An actor's kind as the runner will take it on its first start: `relay`, `github`, else
    /// the kind given, else `phone` or `watch` by the name's start; nil if none says.
    static func kindAtLoad(of name: String, given: String?) -> String? {
        if name == "relay" || name == "github" { return name }
        if let given { return given }
        if name.lowercased().hasPrefix("phone") { return "phone" }
        if name.lowercased().hasPrefix("watch") { return "watch" }
        return nil
    }

    /// `a phone's`, `a watch's` (a run may have several), `the relay's`, `the github's`.
    static func whose(_ kind: String) -> String {
        ["phone", "watch"].contains(kind) ? "a \(kind)'s" : "the \(kind)'s"
    }

    /// Whether `name` can name an actor: its state directory is `<run dir>/<name>`, so a `/` or a
    /// `..` put it outside the run's directory (made there, and never removed); a watch's name is
    /// also the phone's `--watch` id, whose rule this is (`phone --watch`, `PhoneWatches`).
    static func isValidActorName(_ name: String) -> Bool {
        (1...64).contains(name.count) && name != "." && name != ".."
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// The step in the words of the field message: `a wait for deleteCompleted`, `fault 'down'`.
    private func appliesTo(_ action: ScenarioAction) -> String {
        switch action {
        case .wait: "a wait for \(event ?? "snapshot")"
        case .fault, .linkFault: "\(action.rawValue) '\(fault ?? "none")'"
        default: "\(action.rawValue)"
        }
    }

    /// What a `widget` field may name: the watch's widget ids, then their families' short names.
    static let widgetNames: [String] =
        WidgetDescriptor.standard.map(\.id) + WidgetDescriptor.standard.map(\.family.shortName)
}
