import CLIArguments
import Dispatch
import Foundation
import Primitives
import RelayServer
import SQLite
import Synchronization

/// Shared pieces of the subcommands.
enum CLI {
    /// `--log-level` into a logfmt logger on standard error.
    static func logger(_ args: inout Arguments, component: String) throws -> Logger {
        let name = args.string("log-level") ?? "info"
        guard let level = Logger.Level(name: name) else {
            throw Arguments.UsageError(description: "--log-level must be debug, info, warn or error, not '\(name)'")
        }
        return Logger(level: level, fields: [("component", component)])
    }

    /// Returns after SIGINT or SIGTERM (their default actions are disabled for the process).
    static func waitForTerminationSignal() async {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            sources.append(source)
        }
        for await _ in signals { break }
        withExtendedLifetime(sources) {}
    }

    /// Standard input as lines. A blocking `readLine` loop on its own thread: nothing waits for
    /// the thread (it ends at end of input, or with the process), only for the lines it yields.
    static func standardInputLines() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return lines
    }

    /// Writes a line to standard output at once (unbuffered, for scripts reading it). Lines
    /// from different tasks never interleave: a pipe write over `PIPE_BUF` bytes is not atomic.
    static func printLine(_ line: String) {
        let data = Data((line + "\n").utf8)
        outputLock.withLock { _ in FileHandle.standardOutput.write(data) }
    }

    private static let outputLock = LockedState<Void>(())
}

/// `full`, `normal` or `off`.
func SQLiteSynchronousName(_ name: String) -> SQLiteDatabase.Synchronous? {
    SQLiteDatabase.Synchronous.allCases.first { $0.rawValue.lowercased() == name.lowercased() }
}
