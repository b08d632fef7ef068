import CLIArguments
import Foundation
import RelayCommand
import WatchRelayBench

/// `watchrelay`: every subcommand in one executable (`watchrelay-relay` is the relay alone).
let usage = """
    USAGE: watchrelay <subcommand> [options]

    SUBCOMMANDS:
      bench-widget phone favorites change → watch widget reloaded, p50/p99
      demo         the whole story on loopback in a few seconds (what `make run` runs)
      serve        run the relay (WatchConnectivity stand-in) on libwebsockets
      bench        measure the relay and its peers (BENCHMARKS.md)
      bench-cluster  the cluster's cost: SQLite, Redis, same-node and cross-node pairs (docs/REDIS.md)
      bench-core   the relay core's step per message, no socket (ns/message)
      phone        the phone companion: GitHub favorites pushed to the watch
      watch        the headless watch: widget timeline, profile repos, delete from the watch
      github-stub  serve the fixture GitHub API (the offline default of `phone`)
      simulate     run scenario files (Simulator/scenarios/*.json): PASS/FAIL, exit 3 on failure
      pair         pair a phone's and a watch's state directories for WatchConnectivity apps
      switch-watch choose a phone's active watch (a phone paired with several)

    Run `watchrelay <subcommand> --help` for its options.
    Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario assertion failed.
    """

let argv = Array(CommandLine.arguments.dropFirst())
await CLI.exit(program: "watchrelay") {
    let code: Int32
    switch argv.first {
    case "bench-widget": code = try await WidgetBench.run(Array(argv.dropFirst()))
    case "demo": code = try await DemoCommand.run(Array(argv.dropFirst()))
    case "serve": code = try await ServeCommand.run(Array(argv.dropFirst()))
    case "bench": code = try await BenchCommand.run(Array(argv.dropFirst()))
    case "bench-cluster": code = try await BenchClusterCommand.run(Array(argv.dropFirst()))
    case "bench-core": code = try BenchCoreCommand.run(Array(argv.dropFirst()))
    case "phone": code = try await PhoneCommand.run(Array(argv.dropFirst()))
    case "watch": code = try await WatchCommand.run(Array(argv.dropFirst()))
    case "github-stub": code = try await GitHubStubCommand.run(Array(argv.dropFirst()))
    case "simulate": code = try await SimulateCommand.run(Array(argv.dropFirst()))
    #if os(Linux)
    case "pair": code = try await PairCommand.run(Array(argv.dropFirst()))
    case "switch-watch": code = try await SwitchWatchCommand.run(Array(argv.dropFirst()))
    #endif
    case "-h", "--help", "help": print(usage); code = 0
    case nil: FileHandle.standardError.write(Data((usage + "\n").utf8)); code = 2
    default:
        FileHandle.standardError.write(Data("watchrelay: unknown subcommand '\(argv[0])'\n\n\(usage)\n".utf8))
        code = 2
    }
    return code
}
