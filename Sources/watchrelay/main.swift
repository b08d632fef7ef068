import CLIArguments
import Foundation
import Primitives
import RelayCommand
import WatchRelayBench

/// `watchrelay`: every subcommand in one executable (`watchrelay-relay` is the relay alone).
struct Subcommand {
    let name: String
    let summary: String
    let run: ([String]) async throws -> Int32
}

var subcommands: [Subcommand] = [
    Subcommand(name: "demo", summary: "the whole story on loopback in a few seconds (what `make run` runs)") {
        try await DemoCommand.run($0)
    },
    Subcommand(name: "serve", summary: "run the relay (WatchConnectivity stand-in) on libwebsockets") {
        try await ServeCommand.run($0)
    },
    Subcommand(name: "phone", summary: "the phone companion: GitHub favorites pushed to the watch") {
        try await PhoneCommand.run($0)
    },
    Subcommand(name: "watch", summary: "the headless watch: widget timeline, profile repos, delete from the watch") {
        try await WatchCommand.run($0)
    },
]
#if os(Linux)
    subcommands += [
        Subcommand(name: "pair", summary: "pair a phone's and a watch's state directories (WatchConnectivity apps, phone, watch)") {
            try await PairCommand.run($0)
        },
        Subcommand(name: "switch-watch", summary: "choose a phone's active watch (a phone paired with several)") {
            try await SwitchWatchCommand.run($0)
        },
    ]
#endif
subcommands += [
    Subcommand(name: "simulate", summary: "run scenario files (Simulator/scenarios/*.json): PASS/FAIL, exit 3 on failure") {
        try await SimulateCommand.run($0)
    },
    Subcommand(name: "github-stub", summary: "serve the fixture GitHub API (the offline default of `phone`)") {
        try await GitHubStubCommand.run($0)
    },
    Subcommand(name: "bench", summary: "measure the relay and its peers (BENCHMARKS.md)") { try await BenchCommand.run($0) },
    Subcommand(name: "bench-core", summary: "the relay core's step per message, no socket (ns/message)") {
        try BenchCoreCommand.run($0)
    },
    Subcommand(name: "bench-cluster", summary: "the cluster's cost: SQLite, Redis, same-node and cross-node pairs (docs/REDIS.md)") {
        try await BenchClusterCommand.run($0)
    },
    Subcommand(name: "bench-widget", summary: "phone favorites change → watch widget reloaded, p50/p99") {
        try await WidgetBench.run($0)
    },
]

let width = subcommands.map(\.name.count).max() ?? 0
let usage = """
    USAGE: watchrelay <subcommand> [options]

    SUBCOMMANDS:
    \(subcommands.map { "  " + $0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    Run `watchrelay <subcommand> --help` (or `watchrelay help <subcommand>`) for its options,
    `watchrelay --version` for the release, the protocol and the libraries loaded.
    Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario assertion failed, 4 simulate ran no scenario.
    """

let argv = Array(CommandLine.arguments.dropFirst())
// `serve` is the relay: one malloc arena, set before any other thread allocates (RelayCommand).
if argv.first == "serve" { MallocArenas.useOne() }
await CLI.exit(program: "watchrelay") {
    if let name = argv.first, let command = subcommands.first(where: { $0.name == name }) {
        return try await command.run(Array(argv.dropFirst()))
    }
    switch argv.first {
    case "help" where argv.count > 1:
        guard let command = subcommands.first(where: { $0.name == argv[1] }) else {
            throw Arguments.UsageError(description: "no subcommand '\(argv[1])'\n\n\(usage)")
        }
        return try await command.run(["--help"])
    case "--version", "version":
        StandardOutput.writeLine(CLI.versionLine(program: "watchrelay"))
        return 0
    case "-h", "--help", "help":
        StandardOutput.writeLine(usage)
        return 0
    case nil:
        StandardError.write((usage + "\n"))
        return 2
    default:
        StandardError.write("watchrelay: unknown subcommand '\(argv[0])'\n\n\(usage)\n")
        return 2
    }
}
