import CLIArguments
import Foundation
import GitHubAPI
import Primitives
import RelayCommand
import Simulator

/// `watchrelay simulate FILE…`: runs scenarios (relay, GitHub stub, phones and watches in-process,
/// with `--processes` the relay, phones and watches as child processes, with `--memory` on the
/// in-memory relay, with `--cluster` on two relay nodes and a redis-server).
enum SimulateCommand {
    static let help = """
        USAGE: watchrelay simulate [options] FILE...

        Runs each scenario file (Simulator/README.md describes the format) against the real
        relay, the fixture GitHub server, phone companions and headless watches over loopback,
        each actor with its state in a temporary directory. Prints one line per step, PASS or
        FAIL per scenario (a failure names the step, what was expected and what was seen), then
        `N passed, M failed` (`, K skipped` with --memory).

        OPTIONS:
          --json                print one JSON report instead of the lines
          --processes           run the relay (`watchrelay serve`), every phone (`watchrelay
                                phone --machine`) and every watch (`watchrelay watch --machine
                                --manual-clock`) as child processes of this binary: `stop`,
                                `kill` and `restart` SIGKILL them, `start` runs a new process
                                on the same state. The fixture GitHub server stays in this
                                process. Children are killed when a scenario ends or fails
                                and on SIGINT/SIGTERM/SIGHUP.
          --memory              no WebSocket: the relay is in memory (its core wired straight
                                to each device's session core) and the phones and watches,
                                in this process, take their sessions from it. A scenario
                                setting a link fault other than unreachable, disconnect and
                                complication-budget is skipped (SKIP: it needs the relay
                                over sockets)
          --cluster             the relay is two nodes on one redis-server child (Debian's
                                /usr/bin/redis-server; docs/REDIS.md): phones connect to node
                                a, watches to node b, so every frame of a pair crosses nodes;
                                `stop`/`restart` of the relay stops both nodes (Redis, the
                                store, stays up). With --processes the nodes are `watchrelay
                                serve --store redis://…` children (a restart then waits out
                                the dead leader's 1 s lease)
          --fixtures DIR        GitHub fixture directory (default Simulator/fixtures/github,
                                found from here or the binary, else the copy compiled into
                                the binary)
          -h, --help            show this help

        Exit codes: 0 no scenario failed (with --memory some may be skipped), 1 an error
        (e.g. a scenario file that does not load, a fixture file that does not, no run
        directory in TMPDIR), 2 usage, 3 a scenario failed, 4 every scenario was skipped
        (nothing was checked).
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json", "processes", "memory", "cluster"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let json = args.flag("json")
        let processes = args.flag("processes")
        let memory = args.flag("memory")
        let cluster = args.flag("cluster")
        let fixturesOption = try args.string("fixtures")
        try args.rejectUnknown(allowingPositionals: true)
        let fixtures = try GitHubStubCommand.fixturesDirectory(fixturesOption)
        // A fixture that does not load is the run's error (exit 1), said once before anything
        // runs: every scenario failed its `start github` on it, exit 3 as if the app had failed.
        if let fixtures { _ = try GitHubFixtureCatalog.load(directory: fixtures) }
        let files = args.positionals
        guard !files.isEmpty else { throw Arguments.UsageError(description: "simulate needs at least one scenario FILE") }
        guard !(processes && memory) else {
            throw Arguments.UsageError(description: "--processes and --memory exclude each other")
        }
        guard !(cluster && memory) else {
            throw Arguments.UsageError(description: "--cluster and --memory exclude each other")
        }

        // An interrupted run leaves no child and no run directory behind, in every mode; nor
        // does one whose report's reader went (EPIPE, not SIGPIPE: ``report(_:)`` cleans up).
        let signalSources = await cleanUpOnTermination()
        defer { withExtendedLifetime(signalSources) {} }
        signal(SIGPIPE, SIG_IGN)
        let onStep: @Sendable (StepResult) -> Void = { step in
            if !json { report(step.line) }
        }
        let runner =
            memory
            ? ScenarioRunner.inMemory(fixturesDirectory: fixtures, onStep: onStep)
            : ScenarioRunner(
                fixturesDirectory: fixtures, childExecutable: processes ? executable() : nil, cluster: cluster, onStep: onStep)
        var suite = ScenarioSuite()
        await suite.run(
            files: files, runner: runner,
            onStart: { file in if !json { report("scenario \(file)") } },
            onResult: { result in
                guard !json else { return }
                if let reason = result.skipped {
                    report("SKIP \(result.name): \(reason)")
                } else if let message = result.failureMessage {
                    report("FAIL \(result.name) (\(result.milliseconds) ms)\n  \(message)")
                } else {
                    report("PASS \(result.name) (\(result.milliseconds) ms)")
                }
            })
        report(json ? suite.json : suite.summary)
        return suite.exitCode
    }

    /// Writes a line of the report. When it cannot (its reader gone: `simulate … | head -1`),
    /// the runs' children and directories go first, then the process ends as
    /// ``StandardOutput/end(_:)`` says (by SIGPIPE, for a reader gone): a SIGPIPE mid-scenario
    /// left the run's directory in TMPDIR.
    private static func report(_ line: String) {
        do throws(StandardOutput.WriteError) {
            try StandardOutput.write(line: line)
        } catch {
            ChildProcesses.killAll()
            RunDirectories.removeAll()
            StandardOutput.end(error)
        }
    }

    /// On SIGINT, SIGTERM or SIGHUP: SIGKILL every child still running, remove the runs'
    /// temporary directories, then exit with 128 + signal. Returns once a signal is sure to
    /// reach the handler (``SignalHandlers``: a loaded machine's first-second SIGTERM was once
    /// lost, and the run went on).
    private static func cleanUpOnTermination() async -> SignalHandlers {
        await SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
            let killed = ChildProcesses.killAll()
            let removed = RunDirectories.removeAll()
            StandardError.write(
                "simulate: interrupted (signal \(number)); \(killed) child process(es) killed, "
                    + "\(removed) run director\(removed == 1 ? "y" : "ies") removed\n")
            exit(128 + number)
        }
    }

    /// This binary, whatever its name, to run `serve`, `phone` and `watch` as child processes (a
    /// copy named `watchrelay-0.1.0` used to look for a `watchrelay` beside it). A binary
    /// rebuilt while it runs reads as `PATH (deleted)`: the new one at PATH runs the children.
    static func executable() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let deleted = " (deleted)"
        return path.hasSuffix(deleted) ? String(path.dropLast(deleted.count)) : path
    }
}
