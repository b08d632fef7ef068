import Foundation
import Simulator
import TestSupport
import Testing

/// The scenario runner on the in-memory relay: the simulator's logic (steps, waits,
/// expectations, reports) without a WebSocket. The socket paths stay covered by
/// ``ScenarioFileTests/scenarioPassesOverSockets(_:)`` and ``ProcessModeTests``.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct InMemoryModeTests {
    static func step(_ action: String, _ actor: String? = nil, _ edit: (inout ScenarioStep) -> Void = { _ in }) -> ScenarioStep {
        ProcessModeTests.step(action, actor, edit)
    }

    static let start = [step("start", "relay"), step("start", "github"), step("start", "phone"), step("start", "watch"),
                        step("pair") { $0.phone = "phone"; $0.watch = "watch" }]

    /// Pair, add, delete from the watch, and the widget reloads: every step on in-memory sessions.
    @Test func pairAddDeleteAndTheWidgetReloadsWithoutSockets() async throws {
        let scenario = Scenario(
            name: "memory-basics",
            steps: Self.start + [
                Self.step("expectRelay") { $0.pairs = 1; $0.connections = 2 },
                Self.step("mark", "watch"),
                Self.step("add", "phone") { $0.login = "octocat" },
                Self.step("add", "phone") { $0.login = "torvalds" },
                Self.step("wait", "watch") { $0.event = "snapshot"; $0.favorites = ["octocat", "torvalds"] },
                Self.step("advance", "watch") { $0.seconds = 1 },
                Self.step("expectWidget", "watch") { $0.widget = "circular"; $0.equals = "2\nFAV" },
                Self.step("delete", "watch") { $0.login = "octocat" },
                Self.step("wait", "watch") { $0.event = "deleteCompleted"; $0.login = "octocat" },
                Self.step("expectPhoneFavorites", "phone") { $0.favorites = ["torvalds"] },
                Self.step("advance", "watch") { $0.seconds = 1 },
                Self.step("expectWidget", "watch") { $0.widget = "circular"; $0.equals = "1\nFAV" },
            ])
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
        #expect(result.processes.isEmpty)
    }

    /// `expectWatchFavorites` checks `omitted`, the favorites the phone left out of the
    /// watch's list (PROTOCOL.md §12.2): 0 for a whole list; another count fails the step,
    /// saying what the watch has.
    @Test func expectWatchFavoritesChecksHowManyThePhoneLeftOut() async throws {
        let scenario = Scenario(
            name: "memory-omitted",
            steps: Self.start + [
                Self.step("add", "phone") { $0.login = "octocat" },
                Self.step("wait", "watch") { $0.event = "snapshot"; $0.favorites = ["octocat"] },
                Self.step("expectWatchFavorites", "watch") { $0.favorites = ["octocat"]; $0.omitted = 0 },
                Self.step("expectWatchFavorites", "watch") { $0.favorites = ["octocat"]; $0.omitted = 2 },
            ])
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        let failed = try #require(result.failedStep, "\(result.steps.map(\.line).joined(separator: "\n"))")
        #expect(failed.index == 9, "\(result.failureMessage ?? "")")
        #expect(result.failureMessage?.contains("expected 2 favorites on the phone only; seen 0") == true, "\(result.failureMessage ?? "")")
    }

    /// A stopped in-memory relay drops both devices; what the phone adds meanwhile reaches the
    /// watch once it is up again (the devices reconnect at their back-off deadline).
    @Test func aStoppedRelayComesBackAndTheQueuedSnapshotArrives() async throws {
        let scenario = Scenario(
            name: "memory-relay-down",
            steps: Self.start + [
                Self.step("stop", "relay"),
                Self.step("add", "phone") { $0.login = "octocat" },
                Self.step("start", "relay"),
                Self.step("wait", "watch") { $0.event = "snapshot"; $0.favorites = ["octocat"]; $0.timeout = 10 },
                Self.step("expectRelay") { $0.pairs = 1; $0.connections = 2; $0.timeout = 10 },
            ])
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    /// `unreachable` works in memory (the watch sees the phone go and come back).
    @Test func unreachableWorksInMemory() async throws {
        let scenario = Scenario(
            name: "memory-link-faults",
            steps: Self.start + [
                Self.step("linkFault", "phone") { $0.fault = "unreachable" },
                Self.step("wait", "watch") { $0.event = "unreachable" },
                Self.step("linkFault", "phone") { $0.fault = "none" },
                Self.step("wait", "watch") { $0.event = "reachable" },
            ])
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        #expect(result.passed, "\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    /// A scenario setting a fault only the socket relay applies is skipped, saying which step
    /// and why, before anything runs (it used to run up to that step and fail there: `simulate
    /// --memory Simulator/scenarios/*.json` exited 3 with nothing wrong).
    @Test func aScenarioNeedingTheSocketRelayIsSkippedNotFailed() async throws {
        let scenario = Scenario(
            name: "needs-sockets",
            steps: Self.start + [Self.step("linkFault", "phone") { $0.fault = "delay"; $0.ms = 100 }])
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        #expect(result.steps.isEmpty && !result.passed && !result.failed)
        #expect(
            result.skipped == "step \(scenario.steps.count) (linkFault phone delay) sets 'delay', which only the relay over "
                + "sockets applies: run it without --memory", "\(result.skipped ?? "ran")")
        var suite = ScenarioSuite()
        suite.append(result)
        #expect(suite.summary == "0 passed, 0 failed, 1 skipped: nothing ran")
        #expect(suite.exitCode == 4, "nothing was checked: a CI job must not pass on it")
    }

    /// Steps after which the phone's first watch `watch` has both favorites and the phone is
    /// switched to, and paired with, a second watch `watch2` (a scenario's first steps, ending
    /// in a comma).
    static let pairedWithASecondWatch = FailureReportTests.pairedWithTwoFavorites + #"""
          {"action": "wait", "actor": "watch", "event": "snapshot", "favorites": ["octocat", "torvalds"]},
          {"action": "start", "actor": "watch2"},
          {"action": "switchWatch", "actor": "phone", "watch": "watch2"},
          {"action": "pair", "phone": "phone", "watch": "watch2"},
        """#

    /// A phone paired with `watch` before any `switchWatch` (its first, top-level pair), then
    /// switched to `watch2`: `switchWatch` back to `watch` is that first pair again. It was a
    /// new, unpaired watch id: the phone's change never reached `watch` (only `unreachable`).
    @Test func switchingBackToTheFirstPairedWatchUsesItsPair() async throws {
        let result = try await FailureReportTests.runJSON(
            #"{"name": "switch-back-to-first-watch", "steps": ["# + Self.pairedWithASecondWatch + #"""
              {"action": "wait", "actor": "watch2", "event": "snapshot", "favorites": ["octocat", "torvalds"]},
              {"action": "switchWatch", "actor": "phone", "watch": "watch"},
              {"action": "remove", "actor": "phone", "login": "octocat"},
              {"action": "wait", "actor": "watch", "event": "snapshot", "favorites": ["torvalds"], "timeout": 5},
              {"action": "expectWatchFavorites", "actor": "watch2", "favorites": ["octocat", "torvalds"]},
              {"action": "expectRelay", "pairs": 2}
            ]}
            """#)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }

    /// What the phone changed while on its second watch reaches its first watch when it
    /// switches back, with no change after the switch: the second watch's push was stored as
    /// the first watch's revision sent, so the phone's start pushed nothing to the first.
    @Test func aPhoneSwitchedBackToItsFirstWatchPushesWhatThatWatchMissed() async throws {
        let result = try await FailureReportTests.runJSON(
            #"{"name": "switch-back-pushes-the-latest", "steps": ["# + Self.pairedWithASecondWatch + #"""
              {"action": "remove", "actor": "phone", "login": "octocat"},
              {"action": "wait", "actor": "watch2", "event": "snapshot", "favorites": ["torvalds"]},
              {"action": "switchWatch", "actor": "phone", "watch": "watch"},
              {"action": "wait", "actor": "watch", "event": "snapshot", "favorites": ["torvalds"], "timeout": 5}
            ]}
            """#)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }
}
