import Foundation
import Simulator

/// `watchrelay simulate FILE…`: runs scenarios (relay, GitHub stub, phones and watches in-process).
enum SimulateCommand {
    static let help = """
        USAGE: watchrelay simulate [options] FILE...

        Runs each scenario file (Simulator/README.md describes the format) against the real
        relay, the fixture GitHub server, phone companions and headless watches, all in this
        process over loopback, each actor with its state in a temporary directory. Prints one
        line per step, PASS or FAIL per scenario (a failure names the step, what was expected
        and what was seen), then `N passed, M failed`.

        OPTIONS:
          --json                print one JSON report instead of the lines
          --processes           run the relay as a child process (`watchrelay serve`, this
                                binary), so stopping it is a SIGKILL; phones and watches
                                stay in-process
          --fixtures DIR        GitHub fixture directory (default Simulator/fixtures/github,
                                found from here or the binary)
          -h, --help            show this help

        Exit codes: 0 every scenario passed, 2 usage, 3 a scenario failed.
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json", "processes"])
        if args.flag("help") {
            print(help)
            return 0
        }
        let json = args.flag("json")
        let processes = args.flag("processes")
        let fixtures = try GitHubStubCommand.fixturesDirectory(args.string("fixtures"))
        try args.rejectUnknown()
        let files = args.positionals
        guard !files.isEmpty else { throw Arguments.UsageError(description: "simulate needs at least one scenario FILE") }

        let runner = ScenarioRunner(fixturesDirectory: fixtures, relayExecutable: processes ? executable() : nil) { step in
            if !json { CLI.printLine(step.line) }
        }
        var suite = ScenarioSuite()
        await suite.run(
            files: files, runner: runner,
            onStart: { file in if !json { CLI.printLine("scenario \(file)") } },
            onResult: { result in
                guard !json else { return }
                if let message = result.failureMessage {
                    CLI.printLine("FAIL \(result.name) (\(result.milliseconds) ms)\n  \(message)")
                } else {
                    CLI.printLine("PASS \(result.name) (\(result.milliseconds) ms)")
                }
            })
        CLI.printLine(json ? suite.json : suite.summary)
        return suite.exitCode
    }

    /// This binary (`watchrelay`), to run `serve` as a child process.
    static func executable() -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("watchrelay").path
    }
}
