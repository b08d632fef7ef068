import Foundation
import GitExplorerPayloads
import Simulator
import TestSupport
import Testing

/// A broken expectation fails with a message naming the step, what was expected and what was
/// seen; the suite (and so `watchrelay simulate`) maps it to exit code 3.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct FailureReportTests {
    /// Pairs, adds two users, then expects the circular widget to show 99 favorites.
    static let broken = Scenario(
        name: "broken-on-purpose",
        steps: [
            step("start", "relay"), step("start", "github"), step("start", "phone"), step("start", "watch"),
            { var s = ScenarioStep(action: "pair"); s.phone = "phone"; s.watch = "watch"; return s }(),
            { var s = step("add", "phone"); s.login = "octocat"; return s }(),
            { var s = step("wait", "watch"); s.event = "snapshot"; s.favorites = ["octocat"]; return s }(),
            { var s = step("advance", "watch"); s.seconds = 1; return s }(),
            { var s = step("expectWidget", "watch"); s.widget = "circular"; s.equals = "99\nFAV"; return s }(),
            { var s = step("expectPhoneFavorites", "phone"); s.favorites = ["never-reached"]; return s }(),
        ])

    static func step(_ action: String, _ actor: String) -> ScenarioStep {
        ScenarioStep(action: action, actor: actor)
    }

    /// On the in-memory relay: the report is the runner's logic, not the sockets' (the CLI
    /// test below and ``ProcessModeTests`` fail the same scenario over sockets).
    @Test func aBrokenExpectationNamesExpectedSeenAndStep() async throws {
        let runner = ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures)
        let result = await runner.run(Self.broken)
        #expect(!result.passed)
        #expect(result.steps.count == 9, "the run stops at the failing step")
        let failed = try #require(result.failedStep)
        #expect(failed.index == 9)
        #expect(failed.name == "expectWidget watch circular")
        let message = try #require(result.failureMessage)
        #expect(message.contains("step 9 (expectWidget watch circular)"))
        #expect(message.contains(#"expected face.circular text "99\nFAV""#))
        #expect(message.contains(#"seen "1\nFAV""#), "the widget shows one favorite: \(message)")
        #expect(failed.line.contains("expected:") && failed.line.contains("seen:"))

        var suite = ScenarioSuite()
        suite.append(result)
        #expect(suite.exitCode == 3)
        #expect(suite.summary == "0 passed, 1 failed")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(suite.json.utf8)) as? [String: Any])
        #expect(report["exitCode"] as? Int == 3)
        let scenarios = try #require(report["scenarios"] as? [[String: Any]])
        #expect((scenarios.first?["failure"] as? String)?.contains("step 9") == true)
    }

    /// A file that does not load is an error (exit 1), not a failed check (3), whatever the
    /// other files did; it is still reported as its step 0.
    @Test func aScenarioFileThatDoesNotLoadMakesTheRunAnError() async throws {
        let file = NSTemporaryDirectory() + "not-a-scenario-\(UUID().uuidString).json"
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        var suite = ScenarioSuite()
        await suite.run(files: [file, "/nonexistent/x.json"], runner: ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures))
        #expect(suite.exitCode == 1 && suite.summary == "0 passed, 2 failed")
        #expect(suite.results.filter(\.didNotStart).count == 2)
        suite.append(await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Self.broken))
        #expect(suite.exitCode == 1, "a load error outranks a failed check")
        let (status, text) = try await runWatchrelay(["simulate", "--memory", file])
        #expect(status == 1)
        #expect(text.contains("step 0 (load)"), "\(text)")
    }

    /// A TMPDIR where no run directory can be made (here a file; in CI a read-only or full
    /// mount) is the machine's error, exit 1, reported as step 0 with the reason: it was every
    /// scenario's failed first step, exit 3 as if the app had failed, blaming a `--db` that
    /// simulate does not have.
    @Test func aTemporaryDirectoryThatCannotBeMadeIsAnErrorNotAFailedScenario() async throws {
        let directory = TemporaryDirectory()
        let file = directory.path("file-not-directory")
        try Data().write(to: URL(fileURLWithPath: file))
        let seen = try await Self.runDirectoryFailure(temporaryDirectory: file)
        #expect(seen.contains("Not a directory"), "\(seen)")
    }

    /// A TMPDIR that does not exist is not made (it was, with every directory above it, and
    /// left behind): the run is an error, exit 1, saying the directory is missing.
    @Test func aMissingTemporaryDirectoryIsAnErrorAndIsNotMade() async throws {
        let directory = TemporaryDirectory()
        let missing = directory.path("nothere/deeper")
        let seen = try await Self.runDirectoryFailure(temporaryDirectory: missing)
        #expect(seen.contains("No such file or directory") && seen.contains("TMPDIR \(missing) does not exist"), "\(seen)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("nothere")), "simulate made the missing TMPDIR")
    }

    /// Runs `simulate --memory --json` on a scenario with `TMPDIR` set to `temporaryDirectory`,
    /// expects exit 1 with the one step 0, `run directory`, and returns what that step saw.
    static func runDirectoryFailure(temporaryDirectory: String) async throws -> String {
        let scenario = repositoryRoot.appendingPathComponent("Simulator/scenarios/pairing.json").path
        let (status, out) = try await runWatchrelay(
            ["simulate", "--memory", "--json", scenario], environment: ["TMPDIR": temporaryDirectory])
        #expect(status == 1, "\(out)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "\(out)")
        let scenarios = try #require(report["scenarios"] as? [[String: Any]])
        let steps = try #require(scenarios.first?["steps"] as? [[String: Any]])
        #expect(steps.count == 1 && steps.first?["name"] as? String == "run directory", "\(out)")
        return try #require(steps.first?["seen"] as? String, "\(out)")
    }

    /// SIGTERM in the middle of a scenario (here on the in-memory relay, which used to die of
    /// the signal itself) removes the run's temporary directory and says so.
    @Test func anInterruptedRunLeavesNoRunDirectoryBehind() async throws {
        let directory = TemporaryDirectory()
        let errors = Pipe()
        let (process, runDirectories) = try await SimulateCommandTests.startInRunDirectory(
            #"{"name": "long", "steps": [{"action": "sleep", "seconds": 60}]}"#, in: directory,
            output: FileHandle.nullDevice, errors: errors)
        kill(process.processIdentifier, SIGTERM)
        let stderr = await readToEnd(errors.fileHandleForReading)
        await waitForExit(process)
        #expect(process.terminationStatus == 128 + SIGTERM)
        #expect(stderr.contains("simulate: interrupted (signal 15); 0 child process(es) killed, 1 run directory removed"), "\(stderr)")
        #expect(runDirectories().isEmpty)
    }

    @Test func anUnknownActionIsAnInvalidScenario() throws {
        let json = #"{"name": "x", "steps": [{"action": "teleport", "actor": "watch"}]}"#
        #expect(throws: ScenarioError.invalid("step 1 (teleport): unknown action 'teleport'")) {
            try Scenario.decode(Data(json.utf8))
        }
    }

    /// What used to load and pass without checking anything: a mistyped field (ignored by the
    /// decoder), a trailing comma, no steps; and what used to fail only when its step ran.
    @Test(arguments: [
        (
            #"{"name": "x", "steps": [{"action": "expectWidget", "widget": "circular", "equal": "99"}]}"#,
            "step 1 (expectWidget): unknown field 'equal' (did you mean 'equals'?)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectPhoneFavorites", "favourites": ["octocat"]}]}"#,
            "step 1 (expectPhoneFavorites): unknown field 'favourites' (did you mean 'favorites'?)"
        ),
        (#"{"name": "x", "step": [{"action": "start"}]}"#, "unknown field 'step' (did you mean 'steps'?)"),
        (#"{"name": "x", "steps": [{"action": "start", "actor": "relay", "zzzzzzzz": 1}]}"#, "step 1 (start): unknown field 'zzzzzzzz'"),
        (#"{"name": "x", "steps": []}"#, "a scenario needs at least one step"),
        (
            #"{"name": "x", "steps": [{"action": "wait", "event": "snapshots"}]}"#,
            "step 1 (wait): event 'snapshots' is not one of snapshot, reload, stale, deleteAccepted, deleteCompleted, reachable, unreachable, paired, companionAppUninstalled, companionAppInstalled"
        ),
        // Wrong types and missing fields in the file's words (they were Foundation's
        // `DecodingError.typeMismatch … Path: steps[0].seconds. Debug description: …`).
        (#"{"name": "x", "steps": [{"action": "advance", "seconds": "ten"}]}"#, #"step 1 (advance): 'seconds' must be a number, not the string "ten""#),
        (#"{"name": "x", "steps": [{"action": "expectRelay", "pairs": true}]}"#, "step 1 (expectRelay): 'pairs' must be a number, not true"),
        (#"{"name": 7, "steps": [{"action": "start", "actor": "relay"}]}"#, "'name' must be a string, not a number"),
        (#"{"steps": [{"action": "start", "actor": "relay"}]}"#, "'name' is missing"),
        (#"{"name": "x", "steps": [{"actor": "relay"}]}"#, "step 1: 'action' is missing"),
        (#"{"name": "x"}"#, "'steps' is missing"),
        (#"{"name": "x", "steps": "start"}"#, "'steps' must be a list, not the string \"start\""),
        (
            #"{"name": "x", "steps": [{"action": "start", "actor": "relay"}, {"action": "expectPhoneFavorites", "favorites": ["a", 3]}]}"#,
            "step 2 (expectPhoneFavorites): 'favorites' item 2 must be a string, not a number"
        ),
        // An expectation with nothing to check passed as a no-op.
        (
            #"{"name": "x", "steps": [{"action": "expectWidget", "widget": "circular"}]}"#,
            "step 1 (expectWidget): checks nothing: give 'equals', 'contains', 'stale' (at least one)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectRelay", "timeout": 2}]}"#,
            "step 1 (expectRelay): checks nothing: give 'pairs', 'queued', 'connections' (at least one)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectProfile", "actor": "watch"}]}"#,
            "step 1 (expectProfile): checks nothing: give 'state', 'errorCode', 'message', 'repos', 'count', 'stale' (at least one)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectProfile", "state": "load"}]}"#,
            "step 1 (expectProfile): state 'load' is not one of loaded, failed, offline, loading"
        ),
        // A fraction where a whole number goes was "the scenario: a number that is not a whole
        // number or is out of range" (Foundation's error has no coding path).
        (
            #"{"name": "x", "steps": [{"action": "start", "actor": "relay"}, {"action": "wait", "event": "reload", "count": 1.5}]}"#,
            "step 2 (wait): 'count' must be a whole number, not 1.5"
        ),
        (
            #"{"name": "x", "steps": [{"action": "move", "login": "a", "index": 12345678901234567890}]}"#,
            "step 1 (move): 'index' must be a whole number, not 1.2345678901234567e+19"
        ),
        // The fixture server's rate limit counts every request: a login was silently ignored.
        (
            #"{"name": "x", "steps": [{"action": "fault", "fault": "rateLimit", "login": "torvalds"}]}"#,
            "step 1 (fault): a rate limit counts every request: 'login' does not apply to it"
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "fault": "dealy"}]}"#,
            "step 1 (linkFault): fault 'dealy' is not one of unreachable, flap, delay, drop, no-reply, complication-budget, disconnect, slow-writes, none"
        ),
        // Numbers a child process refuses (`--processes`: exit 3) passed in this process and
        // with `--memory`: the watch's advance and --budget, the phone's move.
        (
            #"{"name": "x", "steps": [{"action": "advance", "actor": "watch", "seconds": -5}]}"#,
            "step 1 (advance): 'seconds' must be in 0...31622400 (the watch's advance), not -5"
        ),
        (
            #"{"name": "x", "steps": [{"action": "advance", "actor": "watch", "seconds": 31622400.5}]}"#,
            "step 1 (advance): 'seconds' must be in 0...31622400 (the watch's advance), not 31622400.5"
        ),
        (
            #"{"name": "x", "steps": [{"action": "add", "login": "octocat"}, {"action": "move", "login": "octocat", "index": -1}]}"#,
            "step 2 (move): 'index' must be 0 or more (0 is first; the phone's move), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "start", "actor": "watch", "budget": -1}]}"#,
            "step 1 (start): 'budget' must be in 0...100000 (the watch's --budget), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "restart", "actor": "watch", "budget": 100001}]}"#,
            "step 1 (restart): 'budget' must be in 0...100000 (the watch's --budget), not 100001"
        ),
        // A wait for no event passed in every mode having checked nothing.
        (
            #"{"name": "x", "steps": [{"action": "wait", "actor": "watch", "count": 0}]}"#,
            "step 1 (wait): 'count' must be 1 or more (a wait for no event checks nothing), not 0"
        ),
        (
            #"{"name": "x", "steps": [{"action": "wait", "actor": "watch", "count": -1}]}"#,
            "step 1 (wait): 'count' must be 1 or more (a wait for no event checks nothing), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "wait", "event": "snapshot", "revision": 0}]}"#,
            "step 1 (wait): 'revision' must be 1 or more (revisions start at 1), not 0"
        ),
        // Real time: negative, or more than the runner can sleep for (it trapped converting to ms).
        (
            #"{"name": "x", "steps": [{"action": "wait", "actor": "watch", "timeout": -1}]}"#,
            "step 1 (wait): 'timeout' must be in 0...3600 (seconds of real time), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "sleep", "seconds": -1}]}"#,
            "step 1 (sleep): 'seconds' must be in 0...3600 (seconds of real time), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "sleep", "seconds": 1e300}]}"#,
            "step 1 (sleep): 'seconds' must be in 0...3600 (seconds of real time), not 1e+300"
        ),
        (
            #"{"name": "x", "steps": [{"action": "pair", "phone": "phone", "watch": "watch", "delay": -0.5}]}"#,
            "step 1 (pair): 'delay' must be in 0...3600 (seconds of real time), not -0.5"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectRelay", "pairs": 1, "timeout": 7200}]}"#,
            "step 1 (expectRelay): 'timeout' must be in 0...3600 (seconds of real time), not 7200"
        ),
        // Counts no run can meet.
        (
            #"{"name": "x", "steps": [{"action": "expectReloads", "actor": "watch", "count": -1}]}"#,
            "step 1 (expectReloads): 'count' must be 0 or more (a count), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectProfile", "count": -2}]}"#,
            "step 1 (expectProfile): 'count' must be 0 or more (a count), not -2"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectRelay", "queued": -1}]}"#,
            "step 1 (expectRelay): 'queued' must be 0 or more (a count), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectWatchFavorites", "omitted": -1}]}"#,
            "step 1 (expectWatchFavorites): 'omitted' must be 0 or more (a count), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectGitHub", "status": 404, "count": -1}]}"#,
            "step 1 (expectGitHub): 'count' must be 0 or more (a count), not -1"
        ),
        // The fixture server took a negative rate limit as 0.
        (
            #"{"name": "x", "steps": [{"action": "fault", "fault": "rateLimit", "count": -1}]}"#,
            "step 1 (fault): 'count' must be 0 or more (a count), not -1"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectGitHub", "status": 42}]}"#,
            "step 1 (expectGitHub): 'status' must be in 100...599 (an HTTP status), not 42"
        ),
        (
            #"{"name": "x", "steps": [{"action": "expectGitHub", "count": 1}]}"#,
            "step 1 (expectGitHub): needs 'status' (the HTTP status to count)"
        ),
        // Link-fault parameters the relay's console refuses (over sockets: a failed step; with
        // `--memory`, complication-budget took a negative `left`).
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "flap", "ms": 0}]}"#,
            "step 1 (linkFault): flap needs ms between 1 and 600000 (the relay's console refuses it)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "delay"}]}"#,
            "step 1 (linkFault): delay needs ms between 1 and 600000 (the relay's console refuses it)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "drop", "p": 1.5}]}"#,
            "step 1 (linkFault): drop needs p with 0 < p <= 1 (the relay's console refuses it)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "complication-budget", "target": "pair", "left": -1}]}"#,
            "step 1 (linkFault): complication-budget needs left >= 0 (the relay's console refuses it)"
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "complication-budget", "left": 1}]}"#,
            #"step 1 (linkFault): complication-budget is per pair: give "target": "pair""#
        ),
        (
            #"{"name": "x", "steps": [{"action": "linkFault", "actor": "phone", "fault": "unreachable", "target": "pairs"}]}"#,
            "step 1 (linkFault): target 'pairs' is not one of pair"
        ),
    ])
    func aScenarioThatWouldCheckNothingOrFailLateIsInvalidAtLoad(json: String, why: String) {
        #expect(throws: ScenarioError.invalid(why)) { try Scenario.decode(Data(json.utf8)) }
    }

    @Test func aTrailingCommaIsNotJSON() throws {
        let json = #"{"name": "x", "steps": [{"action": "start", "actor": "relay"}, ]}"#
        #expect {
            try Scenario.decode(Data(json.utf8))
        } throws: { error in
            "\(error)".hasPrefix("invalid scenario: not JSON")
        }
        // A byte-order mark (some editors write one) is not a mistake in the scenario.
        let marked = Data([0xEF, 0xBB, 0xBF]) + Data(#"{"name": "x", "steps": [{"action": "start", "actor": "relay"}]}"#.utf8)
        #expect(try Scenario.decode(marked).steps.count == 1)
    }

    /// Two waits in the other order than the events came: the second one's failure says the
    /// first moved past what it looks for.
    @Test func aWaitForAnEventAnEarlierWaitMovedPastSaysSo() async throws {
        var steps = Array(Self.broken.steps.prefix(5))
        steps.append({ var s = Self.step("add", "phone"); s.login = "octocat"; return s }())
        steps.append({ var s = Self.step("wait", "watch"); s.event = "snapshot"; s.revision = 2; return s }())
        steps.append({ var s = Self.step("wait", "watch"); s.event = "snapshot"; s.revision = 1; s.timeout = 0.3; return s }())
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "order", steps: steps))
        let message = try #require(result.failureMessage, "\(result.steps.map(\.line))")
        #expect(message.contains("step 8"), "\(message)")
        #expect(message.contains("an earlier wait already moved past a matching event: [snapshot(1"), "\(message)")

        // An event a wait took is not one it moved past: no hint for waiting twice for it.
        steps[7] = { var s = Self.step("wait", "watch"); s.event = "snapshot"; s.revision = 2; s.timeout = 0.3; return s }()
        let twice = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "twice", steps: steps))
        let twiceMessage = try #require(twice.failureMessage)
        #expect(twiceMessage.contains("step 8") && !twiceMessage.contains("moved past"), "\(twiceMessage)")
    }

    /// A wait for events that came before the last mark says the mark moved past them (a mark
    /// after a watch's restart races its first events: the failure said only "recent events: []").
    @Test func aWaitForAnEventTheMarkMovedPastSaysSo() async throws {
        var steps = Array(Self.broken.steps.prefix(8))  // … add, wait for the snapshot, advance: reloads
        steps.append(Self.step("mark", "watch"))
        steps.append({ var s = Self.step("wait", "watch"); s.event = "reload"; s.widget = "circular"; s.timeout = 0.3; return s }())
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "mark", steps: steps))
        let message = try #require(result.failureMessage, "\(result.steps.map(\.line))")
        #expect(message.contains("step 10"), "\(message)")
        #expect(message.contains("the last mark moved past a matching event: [reload(face.circular"), "\(message)")
    }

    /// Every GitHub fault a scenario may name loads and runs (the load-time list once left
    /// out `secondaryRateLimit`, which the runner and the README have).
    @Test(arguments: ScenarioStep.gitHubFaults)
    func everyGitHubFaultNameRuns(fault: String) async throws {
        let json = #"{"name": "f", "steps": [{"action": "start", "actor": "github"}, {"action": "fault", "fault": "\#(fault)"}]}"#
        let scenario = try Scenario.decode(Data(json.utf8))
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }

    /// The ends of every range load: the checks refuse only what an actor refuses or what
    /// checks nothing.
    @Test(arguments: [
        #"{"action": "advance", "actor": "watch", "seconds": 0}"#,
        #"{"action": "advance", "actor": "watch", "seconds": 31622400}"#,
        #"{"action": "start", "actor": "watch", "budget": 0}"#,
        #"{"action": "start", "actor": "watch", "budget": 100000}"#,
        #"{"action": "move", "login": "octocat", "index": 0}"#,
        #"{"action": "wait", "actor": "watch", "count": 1, "timeout": 0, "revision": 1}"#,
        #"{"action": "sleep", "seconds": 0}"#,
        #"{"action": "pair", "phone": "phone", "watch": "watch", "delay": 3600}"#,
        #"{"action": "expectReloads", "actor": "watch", "count": 0, "timeout": 0}"#,
        #"{"action": "expectRelay", "pairs": 0, "queued": 0, "connections": 0}"#,
        #"{"action": "expectGitHub", "status": 100, "count": 0}"#,
        #"{"action": "expectGitHub", "status": 599}"#,
        #"{"action": "fault", "fault": "rateLimit", "count": 0}"#,
        #"{"action": "linkFault", "actor": "phone", "fault": "flap", "ms": 600000}"#,
        #"{"action": "linkFault", "actor": "phone", "fault": "drop", "p": 1}"#,
        #"{"action": "linkFault", "actor": "phone", "fault": "complication-budget", "target": "pair", "left": 0}"#,
        #"{"action": "linkFault", "actor": "phone", "fault": "none"}"#,
    ])
    func aNumberAtTheEndOfItsRangeLoads(step: String) throws {
        let json = #"{"name": "x", "steps": [\#(step)]}"#
        #expect(throws: Never.self) { try Scenario.decode(Data(json.utf8)) }
    }

    /// The prober's scenarios (paired, then a number the child process refuses): they passed
    /// with `simulate` and `--memory` and failed with `--processes` (exit 3, `bad_request`);
    /// now the file is refused when it loads, in every mode alike (exit 1, step 0, `load`).
    @Test(arguments: [
        (#"{"action": "advance", "actor": "watch", "seconds": -5}"#, "'seconds' must be in 0...31622400"),
        (#"{"action": "move", "login": "octocat", "index": -1}"#, "'index' must be 0 or more"),
        (#"{"action": "start", "actor": "watch", "budget": -1}"#, "'budget' must be in 0...100000"),
        (#"{"action": "wait", "actor": "watch", "count": 0}"#, "'count' must be 1 or more"),
    ])
    func aNumberAChildRefusesIsALoadErrorInEveryMode(step: String, why: String) async throws {
        let directory = TemporaryDirectory()
        let file = directory.path("probe.json")
        let json = #"""
            {"name": "probe", "steps": [
                {"action": "start", "actor": "relay"}, {"action": "start", "actor": "github"},
                {"action": "start", "actor": "phone"}, {"action": "start", "actor": "watch"},
                {"action": "pair", "phone": "phone", "watch": "watch"},
                {"action": "add", "actor": "phone", "login": "octocat"},
                \#(step)
            ]}
            """#
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        for mode in [[], ["--memory"], ["--processes"]] {
            let (status, out) = try await runWatchrelay(["simulate"] + mode + [file])
            #expect(status == 1, "\(mode): \(out)")
            #expect(out.contains("step 0 (load)") && out.contains("step 7 ") && out.contains(why), "\(mode): \(out)")
        }
    }

    /// Seconds and a probability may be fractions (they were refused as "not a whole number":
    /// every field counted as a whole-number one); counts and indexes may not.
    @Test func aFractionLoadsWhereSecondsOrAProbabilityGo() throws {
        let json = #"""
            {"name": "x", "steps": [
                {"action": "pair", "phone": "phone", "watch": "watch", "delay": 1.5},
                {"action": "advance", "actor": "watch", "seconds": 0.5},
                {"action": "sleep", "seconds": 0.25},
                {"action": "wait", "actor": "watch", "timeout": 0.3},
                {"action": "linkFault", "actor": "phone", "fault": "drop", "p": 0.5}
            ]}
            """#
        let steps = try Scenario.decode(Data(json.utf8)).steps
        #expect(steps.map(\.delay) == [1.5, nil, nil, nil, nil])
        #expect(steps.map(\.seconds) == [nil, 0.5, 0.25, nil, nil])
        #expect(steps[3].timeout == 0.3 && steps[4].p == 0.5)
    }

    /// A whole number written as `2.0` is still one.
    @Test func aWholeNumberWrittenWithAPointLoads() throws {
        let json = #"{"name": "x", "steps": [{"action": "wait", "event": "reload", "count": 2.0}]}"#
        #expect(try Scenario.decode(Data(json.utf8)).steps[0].count == 2)
    }

    /// Runs a scenario given as JSON (through the loader) on the in-memory relay.
    static func runJSON(_ json: String) async throws -> ScenarioResult {
        let scenario = try Scenario.decode(Data(json.utf8))
        return await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario)
    }

    static let pairedWithTwoFavorites = #"""
        {"action": "start", "actor": "relay"}, {"action": "start", "actor": "github"},
        {"action": "start", "actor": "phone"}, {"action": "start", "actor": "watch"},
        {"action": "pair", "phone": "phone", "watch": "watch"},
        {"action": "add", "actor": "phone", "login": "octocat"},
        {"action": "add", "actor": "phone", "login": "torvalds"},
        """#

    /// `fault none` clears every GitHub fault: a login's stayed (the profile still failed).
    @Test func githubFaultNoneClearsALoginsFault() async throws {
        let result = try await Self.runJSON(
            #"{"name": "none-clears-login-faults", "steps": ["# + Self.pairedWithTwoFavorites + #"""
              {"action": "fault", "fault": "down", "login": "gaearon"},
              {"action": "open", "actor": "watch", "login": "gaearon"},
              {"action": "expectProfile", "actor": "watch", "state": "failed", "errorCode": "github_unavailable"},
              {"action": "fault", "fault": "none"},
              {"action": "open", "actor": "watch", "login": "gaearon"},
              {"action": "expectProfile", "actor": "watch", "state": "loaded"}
            ]}
            """#)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }

    /// `rateLimit` `count` allows that many requests from the step on: the server's window had
    /// charged the phone's adds, so the first open was refused.
    @Test func githubRateLimitCountCountsFromTheStep() async throws {
        let result = try await Self.runJSON(
            #"{"name": "rate-limit-from-the-step", "steps": ["# + Self.pairedWithTwoFavorites + #"""
              {"action": "fault", "fault": "rateLimit", "count": 1},
              {"action": "open", "actor": "watch", "login": "mojombo"},
              {"action": "expectProfile", "actor": "watch", "state": "loaded"},
              {"action": "open", "actor": "watch", "login": "tj"},
              {"action": "expectProfile", "actor": "watch", "state": "failed", "errorCode": "rate_limited"}
            ]}
            """#)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }

    /// The CLI (built next to the tests): exit code 3 and the failure on standard output, with
    /// the actors in this process, as child processes, and on the in-memory relay.
    @Test(arguments: [[], ["--processes"], ["--memory"]])
    func theCLIExitsWith3OnAFailedExpectation(mode: [String]) async throws {
        let file = NSTemporaryDirectory() + "broken-\(UUID().uuidString).json"
        let data = try JSONEncoder().encode(Self.broken)
        try data.write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (status, text) = try await runWatchrelay(["simulate", "--fixtures", Repo.fixtures] + mode + [file])
        #expect(status == 3)
        #expect(text.contains("FAIL broken-on-purpose"))
        #expect(text.contains("0 passed, 1 failed"))
        #expect(text.contains(#"expected: face.circular text "99\nFAV""#), "\(text)")
    }

    /// `simulate --memory` over the whole directory: the scenarios that need the socket relay
    /// say SKIP and why, the run exits 0.
    @Test func theCLISkipsWhatTheInMemoryRelayCannotRun() async throws {
        let (status, text) = try await runWatchrelay(
            ["simulate", "--fixtures", Repo.fixtures, "--memory"]
                + ["link-flap-favorites.json", "widget-refresh.json"].map { Repo.scenarios + "/" + $0 })
        #expect(status == 0, "\(text)")
        #expect(text.contains("SKIP link-flap-favorites: step "), "\(text)")
        #expect(text.contains("PASS widget-refresh"))
        #expect(text.contains("1 passed, 0 failed, 1 skipped"))
    }

    /// The same with only scenarios that need the socket relay: nothing was checked, exit 4.
    @Test func theCLIFailsARunThatSkippedEveryScenario() async throws {
        let (status, text) = try await runWatchrelay(
            ["simulate", "--fixtures", Repo.fixtures, "--memory", Repo.scenarios + "/link-flap-favorites.json"])
        #expect(status == 4, "\(text)")
        #expect(text.contains("SKIP link-flap-favorites: step "), "\(text)")
        #expect(text.contains("0 passed, 0 failed, 1 skipped: nothing ran"), "\(text)")
    }
}
