import Foundation
import Simulator
import TestSupport
import Testing

/// `budget` and `foreground` are a watch's: on the start of a phone (or the relay, or github)
/// they were accepted and ignored; `reposMaxAge` is a phone's, `contextBytes` the relay's.
/// Refused when the file loads if the actor's kind is known then (the kind its first start
/// gives, else its name's start), else the step fails when it runs.
@Suite struct StartFieldTests {
    @Test(arguments: [
        (
            #"{"action": "start", "actor": "phone", "budget": 5}"#,
            "step 1 (start): 'budget' applies to a watch's start only, not a phone's (it would be ignored)"
        ),
        (
            #"{"action": "restart", "actor": "bob", "kind": "phone", "foreground": false}"#,
            "step 1 (restart): 'foreground' applies to a watch's start only, not a phone's (it would be ignored)"
        ),
        (
            #"{"action": "start", "actor": "relay", "budget": 1}"#,
            "step 1 (start): 'budget' applies to a watch's start only, not the relay's (it would be ignored)"
        ),
        // The kind the first start gave decides, whatever the name or a later step says.
        (
            #"{"action": "start", "actor": "bob", "kind": "phone"}, {"action": "start", "actor": "bob", "budget": 2}"#,
            "step 2 (start): 'budget' applies to a watch's start only, not a phone's (it would be ignored)"
        ),
        // `reposMaxAge` is a phone's.
        (
            #"{"action": "start", "actor": "watch", "reposMaxAge": 0}"#,
            "step 1 (start): 'reposMaxAge' applies to a phone's start only, not a watch's (it would be ignored)"
        ),
        (
            #"{"action": "start", "actor": "phone", "reposMaxAge": -1}"#,
            "step 1 (start): 'reposMaxAge' must be in 0...86400 (the phone's --repos-max-age), not -1"
        ),
        // `contextBytes` is the relay's, in the range `serve --context-bytes` takes.
        (
            #"{"action": "start", "actor": "phone", "contextBytes": 600}"#,
            "step 1 (start): 'contextBytes' applies to the relay's start only, not a phone's (it would be ignored)"
        ),
        (
            #"{"action": "start", "actor": "bob", "kind": "watch"}, {"action": "restart", "actor": "bob", "contextBytes": 600}"#,
            "step 2 (restart): 'contextBytes' applies to the relay's start only, not a watch's (it would be ignored)"
        ),
        (
            #"{"action": "start", "actor": "github", "contextBytes": 600}"#,
            "step 1 (start): 'contextBytes' applies to the relay's start only, not the github's (it would be ignored)"
        ),
        (
            #"{"action": "start", "actor": "relay", "contextBytes": 0}"#,
            "step 1 (start): 'contextBytes' must be in 1...1048576 (the relay's --context-bytes), not 0"
        ),
        (
            #"{"action": "restart", "actor": "relay", "contextBytes": 1048577}"#,
            "step 1 (restart): 'contextBytes' must be in 1...1048576 (the relay's --context-bytes), not 1048577"
        ),
        (
            #"{"action": "start", "actor": "relay", "contextBytes": 600.5}"#,
            "step 1 (start): 'contextBytes' must be a whole number, not 600.5"
        ),
        // Not a field of the other actions.
        (
            #"{"action": "stop", "actor": "relay", "contextBytes": 600}"#,
            "step 1 (stop): 'contextBytes' does not apply to stop (it would be ignored); its fields: actor, expectError, kind"
        ),
    ])
    func aFieldOfAnotherKindOnAnActorsStartIsRefused(steps: String, why: String) {
        let json = #"{"name": "x", "steps": ["# + steps + "]}"
        #expect(throws: ScenarioError.invalid(why)) { try Scenario.decode(Data(json.utf8)) }
    }

    @Test(arguments: [
        #"{"action": "start", "actor": "watch", "budget": 1, "foreground": false}"#,
        #"{"action": "start", "actor": "phone", "reposMaxAge": 0}, {"action": "restart", "actor": "phone", "reposMaxAge": 2.5}"#,
        #"{"action": "start", "actor": "phone-on-wrist", "kind": "watch"}, {"action": "restart", "actor": "phone-on-wrist", "budget": 3}"#,
        #"{"action": "start", "actor": "relay", "contextBytes": 1}, {"action": "restart", "actor": "relay", "contextBytes": 1048576}"#,
        // Not known at load: the step decides when it runs.
        #"{"action": "start", "actor": "bob", "foreground": true}"#,
    ])
    func aFieldOnItsKindsStartLoads(steps: String) throws {
        let json = #"{"name": "x", "steps": ["# + steps + "]}"
        #expect(try Scenario.decode(Data(json.utf8)).steps.isEmpty == false)
    }

    /// A scenario built in Swift is not checked as a file is: the step fails when it runs.
    @Test(arguments: [
        ("budget", "'budget' on a watch's start only"), ("contextBytes", "'contextBytes' on the relay's start only"),
    ])
    func aFieldOfAnotherKindOnAPhonesStartFailsTheStep(field: String, why: String) async throws {
        var phone = ScenarioStep(action: "start", actor: "phone")
        if field == "budget" { phone.budget = 5 } else { phone.contextBytes = 600 }
        let steps = [ScenarioStep(action: "start", actor: "relay"), ScenarioStep(action: "start", actor: "github"), phone]
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "phone-\(field)", steps: steps))
        #expect(result.failedStep?.index == 3, "\(result.steps.map(\.line))")
        #expect(result.failureMessage?.contains(why) == true, "\(result.failureMessage ?? "")")
    }

    /// A `start` of a running relay leaves it as it is: it cannot take other limits (a restart does).
    @Test func startingARunningRelayWithAnotherContextBytesFailsTheStep() async throws {
        var again = ScenarioStep(action: "start", actor: "relay")
        again.contextBytes = 600
        let steps = [ScenarioStep(action: "start", actor: "relay"), again]
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "relay-twice", steps: steps))
        #expect(result.failedStep?.index == 2, "\(result.steps.map(\.line))")
        #expect(result.failureMessage?.contains("restart it") == true, "\(result.failureMessage ?? "")")
    }
}
