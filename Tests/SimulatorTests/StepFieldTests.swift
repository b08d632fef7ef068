import Foundation
import Simulator
import Testing

/// A field its step's action does not read, or a widget the watch does not have, is refused
/// when the file loads: it was ignored, and the step passed without checking what it says.
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
    ])
    func aFieldTheStepWouldIgnoreIsRefused(step: String, why: String) {
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
    ])
    func aStepWithTheFieldsItsActionReadsLoads(step: String) throws {
        let json = #"{"name": "x", "steps": ["# + step + "]}"
        #expect(try Scenario.decode(Data(json.utf8)).steps.count == 1)
    }
}
