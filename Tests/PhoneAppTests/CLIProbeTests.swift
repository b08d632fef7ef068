import Foundation
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// What a new user's black-box probe of `watchrelay` found: each as a real process, its exit
/// status, standard output and standard error.
@Suite(.timeLimit(.minutes(4)))
struct CLIProbeTests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `watchrelay arguments` (or another of the package's `executable`s) to its end in
    /// `directory`, stdin from `input` (a file) or empty.
    static func run(
        _ arguments: [String], executable: String = watchrelayBinary, in directory: String? = nil,
        environment: [String: String] = [:], input: String? = nil
    ) async throws -> Run {
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let (out, err) = (Pipe(), Pipe())
        p.standardOutput = out
        p.standardError = err
        p.standardInput = try input.map { try #require(FileHandle(forReadingAtPath: $0)) } ?? FileHandle.nullDevice
        try p.run()
        async let stdout = readToEnd(out.fileHandleForReading)
        async let stderr = readToEnd(err.fileHandleForReading)
        let (o, e) = await (stdout, stderr)
        await p.ended()
        return Run(status: p.terminationStatus, stdout: o, stderr: e)
    }

    /// `watch --once --wait-s 1` against a relay that can't be reached gave up only at the
    /// request timeout (10 s by default), not after --wait-s.
    @Test func watchOnceGivesUpAfterWaitSWhenTheRelayCannotBeReached() async throws {
        let (run, took) = try await Self.watchOnceWithoutARelay(waitSeconds: "1", requestTimeoutSeconds: "60")
        #expect(run.status == 1)
        #expect(run.stderr.contains("timed out waiting for the relay's welcome (the last connection attempt:"), "\(run.stderr)")
        #expect(took < .seconds(40), "gave up after \(took), not after --wait-s 1 (the request timeout is 60 s)")
    }

    /// With a `--wait-s` longer than the request timeout it gave up at the request timeout
    /// (a review found it): it keeps trying the relay until --wait-s.
    @Test func watchOnceKeepsTryingARelayThatCannotBeReachedUntilWaitS() async throws {
        let (run, took) = try await Self.watchOnceWithoutARelay(waitSeconds: "3", requestTimeoutSeconds: "1")
        #expect(run.status == 1)
        #expect(run.stderr.contains("the last connection attempt:"), "\(run.stderr)")
        #expect(took >= .seconds(3), "gave up before --wait-s 3")
    }

    /// Pairs `state`'s `p` (phone) and `w` (watch) directories through `relay` with `watchrelay pair`.
    static func pair(_ relay: TestRelay, _ state: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let paired = try await run(["pair", "--relay", relay.url, "--phone-state", state.path("p"), "--watch-state", state.path("w")])
        #expect(paired.status == 0, "\(paired.stderr)", sourceLocation: sourceLocation)
    }

    /// `watch --once --wait-s` of a paired watch against a relay address nothing listens on;
    /// how long it took. (One that is not paired fails at once, whatever the relay.)
    static func watchOnceWithoutARelay(
        waitSeconds: String, requestTimeoutSeconds: String
    ) async throws -> (run: Run, took: Duration) {
        let state = TemporaryDirectory()
        let relay = try await TestRelay.start()
        try await Self.pair(relay, state)
        await relay.stop()
        let started = ContinuousClock.now
        let run = try await Self.run(
            ["watch", "--relay", "ws://127.0.0.1:1/v1", "--state", state.path("w"), "--once", "--wait-s", waitSeconds],
            environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": requestTimeoutSeconds])
        return (run, ContinuousClock.now - started)
    }

    /// `switch-watch` took a watch's state directory for a phone's ("* default", and
    /// `--watch-id default` wrote active-watch into it); `pair` took the two swapped.
    @Test func switchWatchAndPairRefuseTheOtherRolesStateDirectory() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let (phone, watch) = (state.path("p"), state.path("w"))
        let paired = try await Self.run(["pair", "--relay", relay.url, "--phone-state", phone, "--watch-state", watch])
        #expect(paired.status == 0, "\(paired.stderr)")
        let before = try FileManager.default.contentsOfDirectory(atPath: watch).sorted()

        let list = try await Self.run(["switch-watch", "--phone-state", watch, "--list"])
        #expect(list.status == 1)
        #expect(list.stdout.isEmpty, "\(list.stdout)")
        #expect(list.stderr.contains("is a watch's state directory, not a phone's"), "\(list.stderr)")
        let choose = try await Self.run(["switch-watch", "--phone-state", watch, "--watch-id", "default"])
        #expect(choose.status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: watch).sorted() == before, "nothing written")
        // The phone's own directory still answers.
        #expect(try await Self.run(["switch-watch", "--phone-state", phone, "--list"]).stdout == "* default\n")

        // Nor do the phone's state commands write into a watch's directory.
        let add = try await Self.run(["phone", "add", "octocat", "--state", watch])
        #expect(add.status == 1, "\(add.stderr)")
        #expect(add.stderr.contains("--state \(watch) is a watch's state directory"), "\(add.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: watch).sorted() == before, "nothing written")

        let swapped = try await Self.run(["pair", "--relay", relay.url, "--phone-state", watch, "--watch-state", phone])
        #expect(swapped.status == 2)
        #expect(swapped.stderr.contains("--phone-state \(watch) is a watch's state directory"), "\(swapped.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: watch).sorted() == before, "nothing written")
        await relay.stop()
    }

    /// The README's watch command run a second time: the code was used, and the watch exited 1
    /// with `pairing_code_invalid` although it was paired. It says so and goes on.
    @Test func aPairedWatchIgnoresPairWithAWarning() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        try await Self.pair(relay, state)
        let again = try await Self.run(
            ["watch", "--relay", relay.url, "--state", state.path("w"), "--pair", "123456", "--once", "--wait-s", "0"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("already paired: --pair 123456 is ignored"), "\(again.stderr)")
        await relay.stop()
    }

    /// `watch --once` on a state directory that is not paired waited --wait-s, printed an
    /// empty state and exited 0, though nothing could ever arrive: it fails at once (exit 1),
    /// saying how to pair; with --json, stdout holds the error as one JSON object. A relay
    /// that can't be reached does not matter (the relay's timeout was the error).
    @Test func watchOnceOnAWatchThatIsNotPairedFailsSayingHowToPair() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        for url in [relay.url, "ws://127.0.0.1:1/v1"] {
            let once = ["watch", "--relay", url, "--state", state.path("w"), "--once", "--wait-s", "5"]
            let text = try await Self.run(once, environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
            #expect(text.status == 1, "\(url): \(text.stdout)")
            #expect(text.stdout.isEmpty, "\(url): \(text.stdout)")
            #expect(text.stderr.contains("is not paired, so nothing can arrive for --once to show: pass the code"), "\(url): \(text.stderr)")
            let json = try await Self.run(once + ["--json"], environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
            #expect(json.status == 1, "\(url): \(json.stdout)")
            let error = try JSONParser.parse(Array(json.stdout.utf8))["error"]
            #expect(error?["code"] == "not_paired", "\(url): \(json.stdout)")
            #expect(error?["message"]?.stringValue?.contains("watchrelay pair --relay URL") == true, "\(json.stdout)")
        }
        await relay.stop()
    }

    /// `--once --json` says every failure as a JSON object on stdout, not only `not_paired`: a
    /// relay that can't be reached, and a pairing code the relay refuses, left stdout empty.
    @Test func watchOnceInJSONModeSaysEveryFailureAsAJSONObject() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let environment = ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"]
        let away = try await Self.run(
            ["watch", "--relay", "ws://127.0.0.1:1/v1", "--state", state.path("a"), "--pair", "123456", "--once", "--json", "--wait-s", "1"],
            environment: environment)
        #expect(away.status == 1, "\(away.stdout)")
        let awayError = try JSONParser.parse(Array(away.stdout.utf8))["error"]
        #expect(awayError?["code"] == "timeout", "\(away.stdout)")
        let refused = try await Self.run(
            ["watch", "--relay", relay.url, "--state", state.path("b"), "--pair", "000000", "--once", "--json"], environment: environment)
        #expect(refused.status == 1, "\(refused.stdout)")
        let refusedError = try JSONParser.parse(Array(refused.stdout.utf8))["error"]
        #expect(refusedError?["code"]?.stringValue?.hasPrefix("pairing_code") == true, "\(refused.stdout)")
        #expect(refusedError?["message"]?.stringValue?.isEmpty == false, "\(refused.stdout)")
        await relay.stop()
    }

    /// The same once the phone ended the pair while the watch was away: the relay revokes the
    /// watch's token, and the watch learns it at activation.
    @Test func watchOnceOnAWatchWhosePairEndedFails() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        try await Self.pair(relay, state)
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: state.path("p")))
        try await phone.activate()
        try await phone.unpair()
        await phone.close()
        let once = try await Self.run(["watch", "--relay", relay.url, "--state", state.path("w"), "--once", "--wait-s", "5"])
        #expect(once.status == 1, "\(once.stdout)")
        #expect(once.stderr.contains("is not paired, so nothing can arrive"), "\(once.stderr)")
        await relay.stop()
    }

    /// `phone --machine` logged nothing on stderr, where its help says errors from GitHub, the
    /// relay and the store are logged there (console mode did); stdout stays JSON only.
    @Test func machinePhoneLogsItsErrorsOnStandardError() async throws {
        let state = TemporaryDirectory()
        let input = state.path("stdin")
        try "add octocat\nquit\n".write(toFile: input, atomically: true, encoding: .utf8)
        let run = try await Self.run(
            ["phone", "--machine", "--relay", "ws://127.0.0.1:1/v1", "--github", "http://127.0.0.1:1", "--state", state.path("p")],
            environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""source":"github""#), "\(run.stdout)")
        #expect(run.stderr.contains("source=github"), "\(run.stderr)")
        for line in run.stdout.split(separator: "\n") { #expect(line.hasPrefix("{"), "stdout is JSON only: \(line)") }
    }

    /// `serve --trusted-proxy` takes IP addresses only (the relay trusts X-Forwarded-For from them).
    @Test func serveRefusesATrustedProxyThatIsNotAnIPAddress() async throws {
        let state = TemporaryDirectory()
        let run = try await Self.run(["serve", "--port", "0", "--db", state.path("r.db"), "--trusted-proxy", "10.0.0.5,proxy.local"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--trusted-proxy: 'proxy.local' is not an IP address"), "\(run.stderr)")
    }

    /// A path that can't be a directory came out as Foundation's NSError dump; `demo --out`
    /// ran the whole story first.
    @Test func pathErrorsSayWhichPathAndWhatIsWrongOnOneLine() async throws {
        let dir = TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: dir.path("afile"), contents: Data("x".utf8)))
        let down = ["--relay", "ws://127.0.0.1:1/v1"]
        let cases: [([String], String)] = [
            (["phone"] + down + ["--state", "afile"], "afile: a file, not a directory: pass another --state"),
            (["watch"] + down + ["--state", "afile"], "afile: a file, not a directory: pass another --state"),
            (["phone", "add", "octocat", "--state", "afile"], "afile: a file, not a directory: pass another --state"),
            (["pair"] + down + ["--phone-state", "afile", "--watch-state", "w"], "afile: a file, not a directory: pass another --phone-state"),
            (["watch"] + down + ["--state", "/proc/x"], "/proc/x: cannot create the directory"),
            (["watch"] + down + ["--state", "w", "--once", "--snapshot", "afile/x"], "afile/x: afile is a file, not a directory: pass another --snapshot"),
            (["demo", "--out", "afile/x"], "afile is a file, not a directory: pass another --out"),
        ]
        for (arguments, said) in cases {
            let run = try await Self.run(arguments, in: dir.path, environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "60"])
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.contains(said), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("Error Domain"), "\(arguments): \(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments) ran before failing: \(run.stdout.prefix(200))")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("w")), "watch --snapshot afile/x made its state first")
    }

    /// A 3,000,000-byte unknown command was echoed whole in `command` and `error.message`.
    @Test func anUnknownMachineCommandIsEchoedCut() async throws {
        let relay = try await TestRelay.start()
        let dir = TemporaryDirectory()
        let input = dir.path("input")
        #expect(FileManager.default.createFile(atPath: input, contents: Data((String(repeating: "x", count: 3_000_000) + "\n").utf8)))
        for role in ["phone", "watch"] {
            let run = try await Self.run(
                [role, "--relay", relay.url, "--state", dir.path(role), "--machine", "--log-level", "error"], input: input)
            #expect(run.status == 0, "\(role)")
            #expect(run.stdout.utf8.count < 10_000, "\(role): \(run.stdout.utf8.count) bytes")
            let responses = try run.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
                .filter { $0["type"]?.stringValue == "response" }
            let response = try #require(responses.first, "\(role): \(run.stdout.prefix(500))")
            #expect(response["ok"] == false)
            #expect(response["error"]?["code"]?.stringValue == "bad_request")
            let command = try #require(response["command"]?.stringValue)
            #expect(command == String(repeating: "x", count: 200) + "… (3000000 bytes)", "\(role)")
            #expect(response["error"]?["message"]?.stringValue?.contains("…' (3000000 bytes)") == true, "\(role)")
        }
        await relay.stop()
    }

    /// `phone --bogus` said "--relay URL is required".
    @Test func unknownOptionsAreSaidBeforeAMissingRelay() async throws {
        for role in ["phone", "watch"] {
            for option in ["--bogus", "--version"] {
                let run = try await Self.run([role, option])
                #expect(run.status == 2)
                #expect(run.stderr.hasPrefix("watchrelay: unknown option \(option)"), "\(role) \(option): \(run.stderr)")
            }
            #expect(try await Self.run([role]).stderr.hasPrefix("watchrelay: --relay URL is required"))
        }
    }

    /// `pair … --wach-state DIR` (a typo) answered "pair needs --relay, --phone-state and
    /// --watch-state" and its help, naming everything but the typo; so did `switch-watch --bogus`.
    @Test func pairAndSwitchWatchSayAnUnknownOptionBeforeAMissingRequiredOne() async throws {
        let cases: [([String], String)] = [
            (["pair", "--relay", "ws://127.0.0.1:1/v1", "--phone-state", "/tmp/p", "--wach-state", "/tmp/w"], "--wach-state"),
            (["pair", "--bogus"], "--bogus"),
            (["switch-watch", "--phone-stat", "/tmp/p", "--list"], "--phone-stat"),
        ]
        for (arguments, option) in cases {
            let run = try await Self.run(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.hasPrefix("watchrelay: unknown option \(option)"), "\(arguments): \(run.stderr)")
        }
        #expect(try await Self.run(["pair"]).stderr.hasPrefix("watchrelay: pair needs --relay, --phone-state and --watch-state"))
        #expect(try await Self.run(["switch-watch", "--list"]).stderr.hasPrefix("watchrelay: switch-watch needs --phone-state"))
    }

    /// `--relay ws://127.0.0.1:8765` (the /v1 left out) is refused by the relay without a status,
    /// so phone, watch and pair waited out the request timeout and said "read failed".
    @Test func aRelayURLWithoutAPathIsAUsageError() async throws {
        let state = TemporaryDirectory()
        for url in ["ws://127.0.0.1:1", "ws://127.0.0.1:1/"] {
            let cases: [[String]] = [
                ["phone", "--relay", url, "--state", state.path("p")],
                ["watch", "--relay", url, "--state", state.path("w"), "--once", "--wait-s", "1"],
                ["pair", "--relay", url, "--phone-state", state.path("p"), "--watch-state", state.path("w")],
            ]
            for arguments in cases {
                let run = try await Self.run(arguments, environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
                #expect(run.status == 2, "\(arguments): \(run.stderr)")
                #expect(run.stderr.contains("has no path: the relay's URL ends in /v1"), "\(arguments): \(run.stderr)")
                #expect(run.stdout.isEmpty, "\(arguments): \(run.stdout)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: state.path("p")), "a refused URL made the phone's state")
    }

    /// `phone --relay URL --json` ran the companion with --json ignored: a script reading its
    /// stdout for JSON got `github: …`, `ok start …` and the text listing. It is a usage error
    /// naming `list --json` and --machine; `phone list --json` still prints JSON.
    @Test func jsonOnTheRunningCompanionIsAUsageError() async throws {
        let state = TemporaryDirectory()
        let input = state.path("stdin")
        try "list\n".write(toFile: input, atomically: true, encoding: .utf8)
        for extra in [[], ["--machine"]] {
            let run = try await Self.run(
                ["phone", "--relay", "ws://127.0.0.1:1/v1", "--state", state.path("p"), "--json"] + extra,
                environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"], input: input)
            #expect(run.status == 2, "\(extra): \(run.stdout)")
            #expect(run.stdout.isEmpty, "\(extra): \(run.stdout)")
            #expect(run.stderr.contains("--json is for `phone list --json"), "\(extra): \(run.stderr)")
            #expect(run.stderr.contains("--machine"), "\(extra): \(run.stderr)")
        }
        #expect(try await Self.run(["phone", "add", "octocat", "--state", state.path("p")]).status == 0)
        let list = try await Self.run(["phone", "list", "--json", "--state", state.path("p")])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try JSONParser.parse(Array(list.stdout.utf8)).arrayValue?.first?["login"]?.stringValue == "octocat", "\(list.stdout)")
        // On another subcommand it was taken for a second login ("got 2: torvalds, --json").
        let add = try await Self.run(["phone", "add", "torvalds", "--json", "--state", state.path("p")])
        #expect(add.status == 2, "\(add.stdout)")
        #expect(add.stderr.contains("--json is for list (`list --json`), not add"), "\(add.stderr)")
    }

    /// Every subcommand's help lists its options under OPTIONS with `-h, --help`, as a new user
    /// expects from the others (bench-core's had neither, bench-widget's no OPTIONS heading).
    @Test func everySubcommandsHelpListsItsOptionsAndHelp() async throws {
        let usage = try await Self.run(["--help"])
        let names = usage.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0 != "SUBCOMMANDS:" }.dropFirst().prefix { $0.hasPrefix("  ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(names.contains("bench-core") && names.contains("watch"), "\(usage.stdout)")
        for name in names {
            let help = try await Self.run([name, "-h"])
            #expect(help.status == 0, "\(name): \(help.stderr)")
            #expect(help.stdout.hasPrefix("USAGE: watchrelay \(name)"), "\(name): \(help.stdout)")
            #expect(help.stdout.contains("\nOPTIONS:\n"), "\(name): \(help.stdout)")
            #expect(help.stdout.contains("\n  -h, --help "), "\(name): \(help.stdout)")
        }
    }

    /// The package's other executables: `wc-probe --help` and `wc-probe --bogus` printed nothing
    /// and exited 0 (it ran the app); `FixtureEmbedder --help` was a usage error (exit 2).
    @Test func theProbeAppAndTheFixtureEmbedderAnswerHelpAndRefuseUnknownOptions() async throws {
        let directory = URL(fileURLWithPath: watchrelayBinary).deletingLastPathComponent().path
        for (tool, refusal) in [("wc-probe", "wc-probe: unknown option '--bogus'"), ("FixtureEmbedder", "FixtureEmbedder: ")] {
            let help = try await Self.run(["--help"], executable: directory + "/" + tool)
            #expect(help.status == 0, "\(tool): \(help.stderr)")
            #expect(help.stdout.hasPrefix("USAGE: "), "\(tool): \(help.stdout)")
            #expect(help.stdout.contains("\n  -h, --help "), "\(tool): \(help.stdout)")
            let bogus = try await Self.run(["--bogus"], executable: directory + "/" + tool)
            #expect(bogus.status == 2, "\(tool): \(bogus.stdout)")
            #expect(bogus.stdout.isEmpty, "\(tool): \(bogus.stdout)")
            #expect(bogus.stderr.hasPrefix(refusal) && bogus.stderr.contains("USAGE: "), "\(tool): \(bogus.stderr)")
        }
    }

    /// `echo list | watchrelay phone …` (its help's own way to script it) ended with a warning per
    /// favorite, "octocat: GitHub unavailable: 127.0.0.1:PORT: cancelled" (an `error` event with
    /// --machine): the start's refresh, stopped by the end of input, was reported as GitHub
    /// failing. A refresh the shutdown stops reports nothing.
    @Test func aRefreshStoppedByTheShutdownIsNotReportedAsAGitHubError() async throws {
        let relay = try await TestRelay.start()
        let github = try SilentPort()
        let state = TemporaryDirectory()
        #expect(try await Self.run(["phone", "add", "octocat", "--state", state.path("p")]).status == 0)
        let phone = try ChildProcess(
            ["--machine", "--relay", relay.url, "--github", "http://127.0.0.1:\(github.port)", "--state", state.path("p")])
        defer { phone.terminate() }
        #expect(try await phone.line(startingWith: "{").contains(#""type":"ready""#))
        try await eventually(30, "the refresh's request to GitHub") { github.hasConnection }
        phone.closeInput()
        let lines = try await phone.output()
        #expect(try await phone.exitStatus() == 0)
        let errors = lines.filter { $0.contains(#""event":"error""#) }
        #expect(errors.isEmpty, "\(errors)")
        await relay.stop()
    }

    /// `pair` waits up to the request timeout for a relay that does not answer; stopped then
    /// (Ctrl-C), it left the two directories it had made, holding unpaired session stores (an
    /// unpaired phone store counts as a watch), which a failed pairing removes. A signal now
    /// undoes them too, and the exit code is 128 + the signal.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedPairLeavesTheDirectoriesAsItFoundThem(signal: Int32) async throws {
        let relay = try SilentPort()
        let dir = TemporaryDirectory()
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: watchrelayBinary)
        process.arguments = [
            "pair", "--relay", "ws://127.0.0.1:\(relay.port)/v1", "--phone-state", dir.path("p"), "--watch-state", dir.path("w"),
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["WATCHRELAY_REQUEST_TIMEOUT_S": "60"]) { $1 }
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        async let stderr = readToEnd(err.fileHandleForReading)
        // Both stores exist before pair waits for the relay (it makes the watch's right after
        // the phone's): a signal between the two left the watch's directory made after the
        // undo (seen under ThreadSanitizer).
        try await eventually(30, "the phone's and the watch's session stores") {
            ["p", "w"].allSatisfy { FileManager.default.fileExists(atPath: dir.path($0) + "/session.db") }
                || !process.isRunning
        }
        kill(process.processIdentifier, signal)
        let errors = await stderr
        await process.ended()
        #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 128 + signal, "\(errors)")
        #expect(errors.contains("pair interrupted (signal \(signal))"), "\(errors)")
        for side in ["p", "w"] {
            #expect(!FileManager.default.fileExists(atPath: dir.path(side)), "left: \(side)")
        }
    }

    /// `phone --request-timeout-s 0` started, then failed every request at once.
    @Test func aRequestTimeoutOfZeroIsAUsageError() async throws {
        for value in ["0", "-1"] {
            let run = try await Self.run(["phone", "--relay", "ws://127.0.0.1:1/v1", "--request-timeout-s", value])
            #expect(run.status == 2)
            #expect(run.stderr.contains("--request-timeout-s must be seconds in 0.001...86400"), "\(run.stderr)")
        }
    }

    /// Intervals under their least are usage errors: `--refresh-interval 0` refreshed in a
    /// tight loop (every favorite asked of GitHub about 1,000 times a second, `0.001` alike; a
    /// second is the least), and `--external-poll-s 0` would check the state in a tight loop
    /// where inotify is missing (ten milliseconds is the least).
    @Test(arguments: [
        ("refresh-interval", ["0", "0.001", "0.5"], "1...86400"),
        ("external-poll-s", ["0", "0.001"], "0.01...86400"),
        ("repos-max-age", ["-1"], "0...86400"),
    ])
    func anIntervalUnderItsLeastIsAUsageError(option: String, values: [String], range: String) async throws {
        let state = TemporaryDirectory()
        for value in values {
            let run = try await Self.run(
                ["phone", "--relay", "ws://127.0.0.1:1/v1", "--state", state.path("p"), "--\(option)", value],
                environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
            #expect(run.status == 2, "\(value)")
            #expect(run.stderr.contains("--\(option) must be seconds in \(range), not '\(value)'"), "\(run.stderr)")
        }
    }

    /// `serve --tls-cert g.pem` with a file that is not PEM ended with a stale "last errno: No
    /// such file or directory".
    @Test func serveRefusesATLSFileThatIsNotPEM() async throws {
        let dir = TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: dir.path("g.pem"), contents: Data("garbage\n".utf8)))
        let run = try await Self.run(
            ["serve", "--port", "0", "--db", dir.path("r.db"), "--tls-cert", dir.path("g.pem"), "--tls-key", dir.path("g.pem")])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--tls-cert \(dir.path("g.pem")): not a PEM file"), "\(run.stderr)")
        #expect(!run.stderr.contains("errno"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        // A device or a FIFO is refused without reading it (`/dev/zero` was read for ever).
        let device = try await Self.run(
            ["serve", "--port", "0", "--db", dir.path("r.db"), "--tls-cert", "/dev/zero", "--tls-key", dir.path("g.pem")])
        #expect(device.status == 2)
        #expect(device.stderr.contains("--tls-cert /dev/zero: not a regular file"), "\(device.stderr)")
    }
}
