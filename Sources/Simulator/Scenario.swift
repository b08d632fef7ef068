import Foundation
import RelayConsole
import RelayProtocol

/// A scenario: a named list of steps over named actors (`relay`, `github`, phones, watches).
///
/// The JSON format is documented in `Simulator/README.md`:
/// `{"name": "...", "description": "...", "steps": [{"action": "...", ...}, ...]}`.
public struct Scenario: Sendable, Codable, Hashable {
    /// A short name, shown in the report.
    public var name: String
    /// What the scenario checks, in words.
    public var description: String?
    /// The steps, run in order; the first failing one ends the scenario.
    public var steps: [ScenarioStep]

    /// A scenario with these steps.
    public init(name: String, description: String? = nil, steps: [ScenarioStep]) {
        self.name = name
        self.description = description
        self.steps = steps
    }

    /// Decodes a scenario from JSON bytes.
    /// - Throws: ``ScenarioError/invalid(_:)`` naming what is wrong.
    public static func decode(_ data: Data) throws -> Scenario {
        var json = JSONValue.null
        do {
            // Strict JSON first (no trailing commas, no duplicate keys), and every field known:
            // a mistyped field (`equal` for `equals`) would otherwise be ignored, and the step
            // would check nothing and pass.
            do {
                // A byte-order mark some editors write is not JSON; the decoder skips it too.
                let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
                json = try JSONParser.parse(data.starts(with: bom) ? Array(data.dropFirst(3)) : Array(data))
            } catch {
                throw ScenarioError.invalid("not JSON: \(error)")
            }
            try checkFields(json)
            let scenario = try JSONDecoder().decode(Scenario.self, from: data)
            guard !scenario.steps.isEmpty else { throw ScenarioError.invalid("a scenario needs at least one step") }
            var kinds: [String: String] = [:]  // each actor's, as its first start makes it
            for (i, step) in scenario.steps.enumerated() {
                if let why = step.problem ?? step.startProblem(kinds: &kinds) {
                    throw ScenarioError.invalid("step \(i + 1) (\(step.action)): \(why)")
                }
            }
            return scenario
        } catch let error as ScenarioError {
            throw error
        } catch let error as DecodingError {
            throw ScenarioError.invalid(explain(error, in: json))
        } catch {
            throw ScenarioError.invalid("not a scenario: \(error)")
        }
    }

    /// A decoding error in the file's words: which step and field, what it needs, what it has
    /// (`step 1 (advance): 'seconds' must be a number, not the string "ten"`), instead of
    /// Foundation's coding path and debug description.
    static func explain(_ error: DecodingError, in json: JSONValue) -> String {
        /// Where `path` points, in the file's words, and the value there (nil: absent).
        func place(_ path: [any CodingKey]) -> (text: String, value: JSONValue?) {
            var text = ""
            var value: JSONValue? = json
            for (n, key) in path.enumerated() {
                if let index = key.intValue {
                    value = value?.arrayValue.flatMap { index < $0.count ? $0[index] : nil }
                    if n == 1 && path[0].stringValue == "steps" {
                        let action = value?.objectValue?["action"]?.stringValue.map { " (\($0))" } ?? ""
                        text = "step \(index + 1)\(action)"
                    } else {
                        text += " item \(index + 1)"  // of a list inside a step: 'repos' item 2
                    }
                } else {
                    value = value?.objectValue?[key.stringValue]
                    // `steps` before an index reads as "step N"; alone, it is the field.
                    if key.stringValue != "steps" || n == path.count - 1 {
                        text += (text.isEmpty ? "" : ": ") + "'\(key.stringValue)'"
                    }
                }
            }
            return (text.isEmpty ? "the scenario" : text, value)
        }
        func found(_ value: JSONValue?) -> String {
            switch value {
            case .string(let s)?: return "the string \"\(s.prefix(40))\""
            case .int?, .double?: return "a number"
            case .bool(let b)?: return "\(b)"
            case .array?: return "a list"
            case .object?: return "an object"
            case .null?, nil: return "null"
            }
        }
        func kind(_ type: Any.Type) -> String {
            switch type {
            case is Double.Type, is Int.Type, is Int64.Type, is Float.Type: "a number"
            case is String.Type: "a string"
            case is Bool.Type: "true or false"
            case is [Any].Type: "a list"
            case is [String: Any].Type: "an object"
            default: "\(type)"
            }
        }
        switch error {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let (text, value) = place(context.codingPath)
            return "\(text) must be \(kind(type)), not \(found(value))"
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key]).text) is missing"
        case .dataCorrupted(let context):
            // Foundation's words for a number it cannot hold (1.5 for a count, 20 digits): the
            // file passed the strict JSON parser, so that is what "not valid JSON" means here.
            let why = context.debugDescription.contains("not valid JSON")
                ? "a number that is not a whole number or is out of range" : context.debugDescription
            return "\(place(context.codingPath).text): \(why)"
        @unknown default:
            return "not a scenario: \(error)"
        }
    }

    /// Refuses fields a scenario or a step does not have, naming the nearest one that exists.
    private static func checkFields(_ json: JSONValue) throws(ScenarioError) {
        guard let top = json.objectValue else { throw .invalid("a scenario is a JSON object") }
        if let why = unknownField(in: top, known: ["name", "description", "steps"]) { throw .invalid(why) }
        guard let steps = top["steps"]?.arrayValue else { return }  // the decoder says what is missing
        let known = ScenarioStep.fieldNames
        for (i, step) in steps.enumerated() {
            guard let fields = step.objectValue else { throw .invalid("step \(i + 1) is not a JSON object") }
            if let why = unknownField(in: fields, known: known) ?? notWhole(in: fields) {
                throw .invalid("step \(i + 1)\(fields["action"]?.stringValue.map { " (\($0))" } ?? ""): \(why)")
            }
        }
    }

    /// A whole-number field holding a fraction or a number too large, named: Foundation's
    /// decoder reports one with no coding path at all ("The given data was not valid JSON").
    private static func notWhole(in object: [String: JSONValue]) -> String? {
        for field in ScenarioStep.wholeNumberFields.sorted() {
            guard case .double(let d)? = object[field], d.rounded() != d || Int(exactly: d) == nil else { continue }
            return "'\(field)' must be a whole number, not \(d)"
        }
        return nil
    }

    private static func unknownField(in object: [String: JSONValue], known: [String]) -> String? {
        guard let field = object.keys.sorted().first(where: { !known.contains($0) }) else { return nil }
        let nearest = known.min { editDistance($0, field) < editDistance($1, field) }
        let hint = nearest.map { editDistance($0, field) <= 2 ? " (did you mean '\($0)'?)" : "" } ?? ""
        return "unknown field '\(field)'\(hint)"
    }

    /// Levenshtein distance, for the hint (field names are short).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var row = Array(0...y.count)
        for i in x.indices {
            var diagonal = row[0]
            row[0] = i + 1
            for j in y.indices {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x[i] == y[j] ? 0 : 1))
                diagonal = above
            }
        }
        return row[y.count]
    }

    /// Loads a scenario file.
    /// - Throws: ``ScenarioError/invalid(_:)`` if it cannot be read or decoded.
    public static func load(path: String) throws -> Scenario {
        let data = try ScenarioFile.read(path)
        do {
            return try decode(data)
        } catch ScenarioError.invalid(let why) {
            throw ScenarioError.invalid("\(path): \(why)")
        }
    }
}

/// What a step does (its `action` field).
public enum ScenarioAction: String, Sendable, CaseIterable {
    // Life cycle; a phone's or a watch's app uninstalled (its next start installs it again).
    case start, stop, kill, restart, disconnect, reconnect, uninstallApp
    // Pairing; a phone with several watches switches to another one.
    case pair, switchWatch
    // Phone.
    case add, remove, move, refresh
    // Watch.
    case delete, open, select, foreground, background, advance, mark
    // Waiting.
    case wait, sleep
    // GitHub faults.
    case fault
    // Link faults, set on the relay through its console API (`serve --console`).
    case linkFault
    // Expectations.
    case expectWidget, expectReloads, expectProfile, expectPhoneFavorites, expectWatchFavorites, expectRelay
    case expectGitHub, expectPhoneStatus
}

/// One step. Which fields matter depends on ``action`` (see `Simulator/README.md`).
public struct ScenarioStep: Sendable, Codable, Hashable {
    /// The step's action (a ``ScenarioAction`` raw value).
    public var action: String
    /// The actor: `relay`, `github`, or a phone or watch name.
    public var actor: String?
    /// `phone` or `watch`, for an actor whose name does not start with either.
    public var kind: String?
    /// For `pair`: the phone and the watch. For `switchWatch`: the watch the phone switches to.
    public var phone: String?
    public var watch: String?
    /// For `pair`: a code to type instead of the phone's (wrong code).
    public var code: String?
    /// For `pair`: wait this long (seconds) before typing the code (expired code).
    public var delay: Double?
    /// The error the step must fail with (a substring of its code or message).
    public var expectError: String?
    /// A GitHub login (add, remove, move, delete, open, select, fault, wait).
    public var login: String?
    /// For `move`: the new index (0 is first).
    public var index: Int?
    /// For `advance` and `sleep`: seconds. For a `rateLimit` fault: the window (default 3600);
    /// for a `secondaryRateLimit` fault: `Retry-After` (default 60, rounded up to whole seconds).
    public var seconds: Double?
    /// For `wait`: `snapshot`, `reload`, `stale`, `deleteAccepted`, `deleteCompleted`,
    /// `reachable`, `unreachable`, `paired`.
    public var event: String?
    /// For `wait` on `snapshot`: the revision.
    public var revision: Int64?
    /// Seconds to wait (default 3).
    public var timeout: Double?
    /// For `fault`: `down`, `garbage`, `wrongShape`, `secondaryRateLimit`, `rateLimit`, `none`. For `linkFault`: a
    /// console fault kind (`unreachable`, `flap`, `delay`, `drop`, `no-reply`,
    /// `complication-budget`, `disconnect`, `slow-writes`) or `none` (clears them all).
    public var fault: String?
    /// For `linkFault`: `pair` to aim at the actor's whole pair (default: the actor's device).
    public var target: String?
    /// For `linkFault` `flap`, `delay`, `slow-writes`: milliseconds.
    public var ms: Int?
    /// For `linkFault` `drop`: the probability (0 < p ≤ 1).
    public var p: Double?
    /// For `linkFault` `complication-budget`: transfers left.
    public var left: Int?
    /// A widget id (`face.circular`…) or family (`circular`, `accessoryCircular`…).
    public var widget: String?
    /// Expected text (exact).
    public var equals: String?
    /// Expected text (substring).
    public var contains: String?
    /// An expected count (reloads, stale reports, events to wait for).
    public var count: Int?
    /// An expected reload reason (e.g. `snapshotReceived`).
    public var reason: String?
    /// For `expectProfile`: `loaded`, `failed`, `offline`, `loading`.
    public var state: String?
    /// For `expectProfile`: the failure code (e.g. `user_not_found`).
    public var errorCode: String?
    /// For `expectProfile`: a substring of the screen's status line (e.g. `User not found`).
    public var message: String?
    /// For `expectGitHub`: an HTTP status the fixture server answered (with ``count``: how often).
    public var status: Int?
    /// For `expectProfile`: the repo names in order (or a count with ``count``).
    public var repos: [String]?
    /// For `add`, `remove`, `move`: the phone's answer's `sync` (`pushed`, `partial`, `queued`,
    /// `unchanged`).
    public var sync: String?
    /// For `expectPhoneStatus`: whether the phone sees the watch app installed.
    public var watchAppInstalled: Bool?
    /// For `expectPhoneStatus`: the code of the phone's last push failure
    /// (`watch_app_not_installed`…), or `none`.
    public var pushError: String?
    /// For `expectPhoneFavorites`/`expectWatchFavorites`: the logins in order.
    public var favorites: [String]?
    /// For `expectWatchFavorites`: the logins pending delete.
    public var pending: [String]?
    /// For `expectWatchFavorites`: the favorites the phone left out after ``favorites`` because
    /// its whole list did not fit the relay's limit (the snapshot's `omitted`, PROTOCOL.md
    /// §12.2; 0: the watch has the whole list).
    public var omitted: Int?
    /// For `expectRelay`: paired pairs, queued items, connections.
    public var pairs: Int?
    public var queued: Int?
    public var connections: Int?
    /// For `start` of a watch: the daily budgets of every widget (small budgets for stale tests).
    public var budget: Int?
    /// For `start` of a watch: whether the app is in the foreground (default true).
    public var foreground: Bool?
    /// For `expectWidget`: whether the widget must be stale.
    public var stale: Bool?
    /// For `start` of a phone: how long (seconds) a repo list it fetched answers the watch
    /// without asking GitHub again (`phone --repos-max-age`; default 30). 0 asks GitHub on every
    /// `open`, so a GitHub fault meets the list the phone holds (answered stale).
    public var reposMaxAge: Double?
    /// For `start` of the relay: the `contextBytes` it announces in `welcome` (`serve
    /// --context-bytes`; default 262144), so a phone's snapshot may not fit it (PROTOCOL.md §12.2).
    /// Every start of the relay takes it anew: a restart without it has the default again.
    public var contextBytes: Int?

    /// A step with only its action and actor; set the other fields as needed.
    public init(action: String, actor: String? = nil) {
        self.action = action
        self.actor = actor
    }

    /// The fields a step may have (its stored properties, which are its JSON keys).
    static let fieldNames: [String] = Mirror(reflecting: ScenarioStep(action: "")).children.compactMap(\.label)
    /// The fields that hold a whole number (`count`, `index`, `ms`…). By their declared type: a
    /// nil of any optional type `is Int?`, which made every field one (`"delay": 0.5` refused).
    static let wholeNumberFields: [String] = Mirror(reflecting: ScenarioStep(action: "")).children.compactMap {
        let type = Swift.type(of: $0.value)
        return type == Int?.self || type == Int64?.self ? $0.label : nil
    }

    /// The events a `wait` step waits for.
    public static let waitEvents = [
        "snapshot", "reload", "stale", "deleteAccepted", "deleteCompleted", "reachable", "unreachable", "paired",
        "companionAppUninstalled", "companionAppInstalled",
    ]
    /// The fixture GitHub server's faults (`fault`).
    public static let gitHubFaults = ["down", "garbage", "wrongShape", "secondaryRateLimit", "rateLimit", "none"]
    /// A phone change's answers (`sync` of `add`, `remove`, `move`).
    public static let syncs = ["pushed", "partial", "queued", "unchanged"]
    /// The profile screen's phases (`expectProfile`'s `state`).
    public static let profileStates = ["loaded", "failed", "offline", "loading"]
    /// The relay's link faults (`linkFault`): the console's kinds, and `none`.
    public static let linkFaults = FaultKind.allCases.map(\.rawValue) + ["none"]

    /// What is wrong with this step that can be told before it runs, or nil.
    var problem: String? {
        guard let action = ScenarioAction(rawValue: action) else {
            return "unknown action '\(self.action)'"
        }
        return numberProblem(action) ?? valueProblem(action) ?? fieldProblem(action)
    }

    /// What is wrong with this step's names and choices (an event, a fault, what an expectation
    /// checks), or nil.
    private func valueProblem(_ action: ScenarioAction) -> String? {
        func oneOf(_ value: String?, _ allowed: [String], _ field: String) -> String? {
            guard let value, !allowed.contains(value) else { return nil }
            return "\(field) '\(value)' is not one of \(allowed.joined(separator: ", "))"
        }
        /// An expectation must check something: with none of its fields it would pass as a no-op.
        func oneGiven(_ fields: [(String, Bool)]) -> String? {
            guard !fields.contains(where: \.1) else { return nil }
            return "checks nothing: give \(fields.map { "'\($0.0)'" }.joined(separator: ", ")) (at least one)"
        }
        switch action {
        case .wait: return oneOf(event, Self.waitEvents, "event")
        case .fault:
            if fault == "rateLimit", login != nil {
                return "a rate limit counts every request: 'login' does not apply to it"
            }
            return oneOf(fault, Self.gitHubFaults, "fault")
        case .linkFault: return oneOf(fault, Self.linkFaults, "fault") ?? oneOf(target, ["pair"], "target")
        case .expectWidget:
            return oneGiven([("equals", equals != nil), ("contains", contains != nil), ("stale", stale != nil)])
        case .expectRelay:
            return oneGiven([("pairs", pairs != nil), ("queued", queued != nil), ("connections", connections != nil)])
        case .expectProfile:
            return oneOf(state, Self.profileStates, "state")
                ?? oneGiven([
                    ("state", state != nil), ("errorCode", errorCode != nil), ("message", message != nil),
                    ("repos", repos != nil), ("count", count != nil), ("stale", stale != nil),
                ])
        case .expectGitHub: return status == nil ? "needs 'status' (the HTTP status to count)" : nil
        case .add, .remove, .move: return oneOf(sync, Self.syncs, "sync")
        case .expectPhoneStatus:
            return oneGiven([("watchAppInstalled", watchAppInstalled != nil), ("pushError", pushError != nil)])
        default: return nil
        }
    }
}

/// A scenario that cannot be loaded or run as written.
public enum ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not a valid scenario, or a step is malformed.
    case invalid(String)

    public var description: String {
        switch self {
        case .invalid(let why): "invalid scenario: \(why)"
        }
    }
}
