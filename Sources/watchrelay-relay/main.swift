import Primitives
import RelayCommand

/// `watchrelay-relay`: the relay alone, the same as `watchrelay serve` (and the same options),
/// in a binary that carries none of the phone, watch, GitHub or benchmark code.
let usage = """
    USAGE: watchrelay-relay [serve] [options]

    The relay alone: `watchrelay-relay [options]` is `watchrelay serve [options]`, in a smaller
    process (no phone, watch, GitHub or benchmark code; a release build links the Swift
    runtime statically). The options:

    """

MallocArenas.useOne()  // first, before any other thread allocates
var argv = Array(CommandLine.arguments.dropFirst())
if argv.first == "serve" { argv.removeFirst() }
let options = argv
await CLI.exit(program: "watchrelay-relay") {
    guard !options.contains("-h") && !options.contains("--help") else {
        StandardOutput.writeLine(usage + ServeCommand.help)
        return 0
    }
    return try await ServeCommand.run(options)
}
