import Foundation
import GitExplorerPayloads
import Simulator
import TestSupport
import Testing

/// `--processes`: the relay, the phones and the watches as `watchrelay` child processes;
/// `stop`/`kill` is a SIGKILL and `start` runs a new process on the same state directory.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ProcessModeTests {
    /// `watchrelay` next to the tests (`swift build --build-tests` builds it there).
    static var binary: String? {
        FileManager.default.isExecutableFile(atPath: watchrelayBinary) ? watchrelayBinary : nil
    }

    static func step(_ action: String, _ actor: String? = nil, _ edit: (inout ScenarioStep) -> Void = { _ in }) -> ScenarioStep {
        var s = ScenarioStep(action: action, actor: actor)
        edit(&s)
        return s
    }

    /// Pairs, adds two favorites, SIGKILLs the phone and the watch, starts new processes on
    /// their state, and checks the favorites, the pair, and that both directions still work.
    static let crashBothDevices = Scenario(
        name: "crash-both-devices",
        steps: [
            step("start", "relay"), step("start", "github"), step("start", "phone"), step("start", "watch"),
            step("pair") { $0.phone = "phone"; $0.watch = "watch" },
            step("add", "phone") { $0.login = "octocat" },
            step("add", "phone") { $0.login = "torvalds" },
            step("wait", "watch") { $0.event = "snapshot"; $0.favorites = ["octocat", "torvalds"] },
            step("kill", "phone"), step("kill", "watch"),
            step("start", "phone"), step("start", "watch"),
            step("expectPhoneFavorites", "phone") { $0.favorites = ["octocat", "torvalds"] },
            step("expectWatchFavorites", "watch") { $0.favorites = ["octocat", "torvalds"]; $0.pending = [] },
            step("expectRelay") { $0.pairs = 1 },
            // The new phone process pushes to the new watch process: the pair survived.
            step("add", "phone") { $0.login = "gaearon" },
            step("wait", "watch") { $0.event = "snapshot"; $0.favorites = ["octocat", "torvalds", "gaearon"]; $0.timeout = 10 },
            // And the other way: a delete from the watch reaches the phone.
            step("delete", "watch") { $0.login = "torvalds" },
            step("wait", "watch") { $0.event = "deleteCompleted"; $0.login = "torvalds"; $0.timeout = 10 },
            step("expectPhoneFavorites", "phone") { $0.favorites = ["octocat", "gaearon"] },
        ])

    /// A CI job that keeps the binary under another name (`watchrelay-ci`, a versioned artifact)
    /// runs its children from that binary: `--processes` used to spawn a `watchrelay` beside it,
    /// and every scenario failed at `start relay` with "No such file or directory".
    @Test func aRenamedBinaryStartsItsChildrenFromItself() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let directory = TemporaryDirectory()
        let renamed = directory.path("watchrelay-ci")
        // A hard link keeps the new name in /proc/self/exe (a symbolic link resolves to the old one).
        if link(binary, renamed) != 0 { try FileManager.default.copyItem(atPath: binary, toPath: renamed) }
        let file = directory.path("relay.json")
        let scenario = #"{"name": "relay", "steps": [{"action": "start", "actor": "relay"}, {"action": "expectRelay", "pairs": 0}]}"#
        try Data(scenario.utf8).write(to: URL(fileURLWithPath: file))
        let (status, text) = try await runWatchrelay(["simulate", "--processes", file], executable: renamed)
        #expect(status == 0, "\(text)")
        #expect(text.contains("PASS relay"), "\(text)")
    }

    @Test func aKilledPhoneAndWatchComeBackWithTheirPairingAndFavorites() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary)
        let result = await runner.run(Self.crashBothDevices)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")

        for actor in ["phone", "watch"] {
            let runs = result.processes.filter { $0.actor == actor }
            #expect(runs.count == 2, "\(actor): one process before the kill, one after: \(runs)")
            #expect(Set(runs.map(\.pid)).count == runs.count, "\(actor): a new process each start: \(runs)")
            #expect(runs.first?.wasKilled == true, "\(actor) was SIGKILLed: \(runs)")
        }
        #expect(result.processes.contains { $0.actor == "relay" })
        // Nothing is left behind: every child ended (killed and reaped) by the end of the run.
        for record in result.processes {
            #expect(record.termination != nil, "\(record.actor) \(record.pid) still running")
            #expect(kill(record.pid, 0) == -1, "\(record.actor) \(record.pid) still exists")
        }
    }

    @Test func aKilledRelayLosesNothing() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let scenario = try Scenario.load(path: Repo.scenarios + "/relay-restart.json")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary)
        let result = await runner.run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")")
        #expect(result.processes.filter { $0.actor == "relay" && $0.wasKilled }.count == 3, "\(result.processes)")
    }

    /// On a cluster, the report names each relay process's node: two processes are both
    /// actor `relay`, and only `node` tells them apart.
    @Test func aClusterReportNamesEachRelayProcessesNode() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary, cluster: true)
        let scenario = Scenario(
            name: "cluster-nodes",
            steps: [
                Self.step("start", "relay"), Self.step("start", "github"), Self.step("start", "phone"),
                Self.step("start", "watch"),
                Self.step("pair") { $0.phone = "phone"; $0.watch = "watch" },
                Self.step("expectRelay") { $0.pairs = 1 },
            ])
        let result = await runner.run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")")
        let relays = result.processes.filter { $0.actor == "relay" }
        #expect(relays.compactMap(\.node).sorted() == ["a", "b"], "\(relays)")
        let reported = try #require(result.json["processes"] as? [[String: Any]])
        #expect(reported.compactMap { $0["node"] as? String }.sorted() == ["a", "b"], "\(reported)")
        #expect(result.processes.filter { $0.actor != "relay" }.allSatisfy { $0.node == nil })
    }

    /// Every scenario file passes with every actor but GitHub in a child process.
    @Test(arguments: Repo.scenarioFiles())
    func scenarioPassesWithChildProcesses(_ file: String) async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let scenario = try Scenario.load(path: Repo.scenarios + "/" + file)
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary)
        let result = await runner.run(scenario, file: file)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
        #expect(result.processes.contains { $0.actor == "phone" } && result.processes.contains { $0.actor == "watch" })
        // An app uninstalled (`uninstallApp`) exits by itself; every other child is killed.
        let uninstalled = Set(scenario.steps.filter { $0.action == "uninstallApp" }.compactMap(\.actor))
        #expect(
            result.processes.allSatisfy { $0.wasKilled || (uninstalled.contains($0.actor) && $0.termination == "exit status 0") },
            "\(result.processes)")
    }

    /// A broken expectation fails the same way with child processes.
    @Test func aBrokenExpectationFailsTheSameWayWithChildProcesses() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary)
        let result = await runner.run(FailureReportTests.broken)
        let failed = try #require(result.failedStep)
        #expect(failed.index == 9)
        #expect(result.failureMessage?.contains(#"expected face.circular text "99\nFAV"; seen "1\nFAV""#) == true,
                "\(result.failureMessage ?? "")")
        #expect(result.processes.allSatisfy { $0.termination != nil }, "children are killed after a failure too")
    }
}
