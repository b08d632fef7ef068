import Foundation

/// `watchrelay`: the one executable (serve; more subcommands land with their issues).
let usage = """
    USAGE: watchrelay <subcommand> [options]

    SUBCOMMANDS:
      serve        run the relay (WatchConnectivity stand-in) on libwebsockets

    Run `watchrelay <subcommand> --help` for its options.
    Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario assertion failed.
    """

let argv = Array(CommandLine.arguments.dropFirst())
let code: Int32
do {
    switch argv.first {
    case "serve": code = try await ServeCommand.run(Array(argv.dropFirst()))
    case "-h", "--help", "help": print(usage); code = 0
    case nil: FileHandle.standardError.write(Data((usage + "\n").utf8)); code = 2
    default:
        FileHandle.standardError.write(Data("watchrelay: unknown subcommand '\(argv[0])'\n\n\(usage)\n".utf8))
        code = 2
    }
} catch let error as Arguments.UsageError {
    FileHandle.standardError.write(Data("watchrelay: \(error)\n".utf8))
    code = 2
} catch {
    FileHandle.standardError.write(Data("watchrelay: \(error)\n".utf8))
    code = 1
}
exit(code)
