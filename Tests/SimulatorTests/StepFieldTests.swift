import Foundation
import Simulator
import Testing

/// A field its step's action does not read, or a widget the watch does not have, is refused
/// when the file loads: it was ignored, and the step passed without checking what it says. So
/// is an actor's name that is not one (a path out of the run's directory).
@Suite struct StepFieldTests {
    @Test(arguments: [
        // A wait's filters are its event's: these waited for any delete or snapshot.
        (
            #"{"action": "wait", "event": "deleteCompleted", "login": "octocat", "favorites": ["torvalds"]}"#,
            "step 1 (wait): 'favorites' does not apply to a wait for deleteCompleted (it would be ignored); "
                + "its fields: actor, count, event, expectError, login, timeout, watch"
        ),
        (
            #"{"action": "wait", "login": "octocat"}"#,
            "step 1 (wait): 'login' does not apply to a wait for snapshot (it would be ignored); "
                + "its fields: actor, count, event, expectError, favorites, revision, timeout, watch"
        ),
        (
            #"{"action": "expectReloads", "actor": "watch", "count": 1, "equals": "2\nFAV"}"#,
            "step 1 (expectReloads): 'equals' does not apply to expectReloads (it would be ignored); "
                + "its fields: actor, count, expectError, reason, timeout, watch, widget"
        ),
        // Only a rate limit counts requests: this was down for every request, not for two.
        (
            #"{"action": "fault", "fault": "down", "count": 2}"#,
            "step 1 (fault): 'count' does not apply to fault 'down' (it would be ignored); its fields: actor, expectError, fault, login"
        ),
        // The relay's console takes only the parameter of the fault's kind.
        (
            #"{"action": "linkFault", "actor": "phone", "fault": "unreachable", "ms": 500}"#,
            "step 1 (linkFault): 'ms' does not apply to linkFault 'unreachable' (it would be ignored); "
                + "its fields: actor, expectError, fault, target"
        ),
        // No watch has this widget: an expectReloads of it counted no reload, and passed.
        (
            #"{"action": "expectReloads", "actor": "watch", "widget": "circlar"}"#,
            "step 1 (expectReloads): widget 'circlar' is not one of the watch's: "
                + "face.circular, face.corner, face.inline, stack.rectangular, circular, corner, inline, rectangular"
        ),
        (
            #"{"action": "wait", "event": "reload", "widget": "face.rectangular"}"#,
            "step 1 (wait): widget 'face.rectangular' is not one of the watch's: "
                + "face.circular, face.corner, face.inline, stack.rectangular, circular, corner, inline, rectangular"
        ),
        // An actor's state directory is `<run dir>/<name>`: this one was made outside the run's
        // directory (`$TMPDIR/escaped`, after a first phone) and left there after the run.
        (
            #"{"action": "start", "actor": "phone/../../escaped"}"#,
            "step 1 (start): actor 'phone/../../escaped' is not a name: 1-64 of A-Z a-z 0-9 . _ -, not . or .. "
                + "(a phone's or a watch's state directory in the run's directory, and the phone's --watch id)"
        ),
        (
            #"{"action": "switchWatch", "actor": "phone", "watch": ".."}"#,
            "step 1 (switchWatch): watch '..' is not a name: 1-64 of A-Z a-z 0-9 . _ -, not . or .. "
                + "(a phone's or a watch's state directory in the run's directory, and the phone's --watch id)"
        ),
        (#"{"action": "start", "actor": "bob", "kind": "tablet"}"#, "step 1 (start): kind 'tablet' is not one of phone, watch"),
        // An app uninstalled and what the phone says of it (PROTOCOL.md §7.1).
        (
            #"{"action": "add", "login": "octocat", "sync": "queud"}"#,
            "step 1 (add): sync 'queud' is not one of pushed, partial, queued, unchanged"
        ),
        (#"{"action": "expectPhoneStatus", "actor": "phone"}"#, "step 1 (expectPhoneStatus): checks nothing: give 'watchAppInstalled', 'pushError' (at least one)"),
        (
            #"{"action": "uninstallApp", "actor": "watch", "login": "octocat"}"#,
            "step 1 (uninstallApp): 'login' does not apply to uninstallApp (it would be ignored); its fields: actor, expectError, kind"
        ),
    ])
    func aFieldTheStepWouldIgnoreOrANameThatIsNotOneIsRefused(step: String, why: String) {
        let json = #"{"name": "x", "steps": ["# + step + "]}"
        #expect(throws: ScenarioError.invalid(why)) { try Scenario.decode(Data(json.utf8)) }
    }

    /// A widget by id, short family name or family, and the fields each action reads, load.
    @Test(arguments: [
        #"{"action": "expectReloads", "actor": "watch", "widget": "accessoryCircular", "reason": "snapshotReceived", "count": 1}"#,
        #"{"action": "expectWidget", "widget": "stack.rectangular", "contains": "octocat", "stale": false}"#,
        #"{"action": "wait", "event": "reload", "widget": "inline", "reason": "snapshotReceived", "count": 2, "timeout": 5}"#,
        #"{"action": "wait", "event": "snapshot", "revision": 3, "favorites": ["octocat"]}"#,
        #"{"action": "fault", "actor": "github", "fault": "rateLimit", "count": 1}"#,
        #"{"action": "linkFault", "actor": "phone", "fault": "complication-budget", "target": "pair", "left": 0}"#,
        #"{"action": "start", "actor": "w", "kind": "watch", "budget": 1, "foreground": false}"#,
        #"{"action": "uninstallApp", "actor": "phone"}"#,
        #"{"action": "move", "actor": "phone", "login": "octocat", "index": 0, "sync": "queued"}"#,
        #"{"action": "expectPhoneStatus", "watchAppInstalled": false, "pushError": "watch_app_not_installed", "timeout": 5}"#,
        #"{"action": "wait", "event": "companionAppUninstalled"}"#,
    ])
    func aStepWithTheFieldsItsActionReadsLoads(step: String) throws {
        let json = #"{"name": "x", "steps": ["# + step + "]}"
        #expect(try Scenario.decode(Data(json.utf8)).steps.count == 1)
    }

    /// A scenario built in Swift is not checked as a file is: its step fails instead of making
    /// the state directory outside the run's.
    @Test func anActorNameLeavingTheRunDirectoryFailsItsStep() async throws {
        let escaped = "escaped-" + UUID().uuidString
        let steps = ["relay", "github", "phone", "phone/../../" + escaped].map { ScenarioStep(action: "start", actor: $0) }
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "escape", steps: steps))
        #expect(result.failedStep?.index == 4, "\(result.steps.map(\.line))")
        let outside = NSTemporaryDirectory() + escaped
        #expect(!FileManager.default.fileExists(atPath: outside))
        try? FileManager.default.removeItem(atPath: outside)
    }

    /// The kind given on an actor's first start decides, whatever its name starts with: a
    /// `"kind": "watch"` named `phone-on-wrist` started a phone, and its watch steps found no watch.
    @Test func theKindGivenOnTheFirstStartDecides() async throws {
        let steps = [
            ScenarioStep(action: "start", actor: "relay"), ScenarioStep(action: "start", actor: "github"),
            { var s = ScenarioStep(action: "start", actor: "phone-on-wrist"); s.kind = "watch"; return s }(),
            ScenarioStep(action: "mark", actor: "phone-on-wrist"), ScenarioStep(action: "stop", actor: "phone-on-wrist"),
            ScenarioStep(action: "start", actor: "phone-on-wrist"),
            { var s = ScenarioStep(action: "advance", actor: "phone-on-wrist"); s.seconds = 1; return s }(),
        ]
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "kind", steps: steps))
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }
}
