import CLIArguments
import Dispatch
import Foundation
import Primitives
import RelayProtocol
import RelayServer
import SQLite
import Synchronization

/// Shared pieces of the subcommands (of `watchrelay` and `watchrelay-relay`).
public enum CLI {
    /// The release of WatchRelay this build is: one number for every binary of the package.
    public static let release = "0.1.0"

    /// What `--version` prints: the release, the wire protocol, and the versions of the C
    /// libraries loaded at run time (what a bug report needs).
    public static func versionLine(program: String) -> String {
        "\(program) \(release) (protocol \(RelayServer.subprotocol); libwebsockets \(RelayServer.libwebsocketsVersion); "
            + "SQLite \(SQLiteDatabase.libraryVersion))"
    }

    /// `--log-level` into a logfmt logger on standard error.
    public static func logger(_ args: inout Arguments, component: String) throws -> Logger {
        let name = try args.string("log-level") ?? "info"
        guard let level = Logger.Level(name: name) else {
            throw Arguments.UsageError(description: "--log-level must be debug, info, warn or error, not '\(name)'")
        }
        return Logger(level: level, fields: [("component", component)])
    }

    /// Standard input as lines. A blocking `readLine` loop on its own thread: nothing waits for
    /// the thread (it ends at end of input, or with the process), only for the lines it yields.
    public static func standardInputLines() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return lines
    }

    /// Runs a command's `body` and exits the process with its code: a usage error exits 2, any
    /// other error 1, each written to standard error after `program: `.
    public static func exit(program: String, running body: () async throws -> Int32) async -> Never {
        let code: Int32
        do {
            code = try await body()
        } catch let error as Arguments.UsageError {
            StandardError.write("\(program): \(error)\n")
            code = 2
        } catch {
            StandardError.write("\(program): \(error)\n")
            code = 1
        }
        Foundation.exit(code)
    }

    /// `--relay` must name a WebSocket endpoint: anything else would only time out later,
    /// waiting for a welcome, with nothing to say why.
    public static func requireWebSocketURL(_ relay: String) throws {
        guard relay.hasPrefix("ws://") || relay.hasPrefix("wss://") else {
            throw Arguments.UsageError(description: "--relay must be a ws:// or wss:// URL, not '\(relay)'")
        }
        // The relay refuses an upgrade on any path but its own (/v1, PROTOCOL.md §2.1) by closing
        // the connection, so a URL without one failed only after the request timeout, as
        // "read failed".
        if let path = URLComponents(string: relay)?.path, path.isEmpty || path == "/" {
            throw Arguments.UsageError(
                description: "--relay '\(relay)' has no path: the relay's URL ends in /v1 (the first line `watchrelay serve` prints)")
        }
    }

    /// A pairing code is the six digits the phone shows (PROTOCOL.md §6.1). Anything else would
    /// only reach the relay to be refused as a wrong code, and count towards its lockout.
    public static func requirePairingCode(_ code: String) throws {
        guard PairCode.isWellFormed(code) else {
            throw Arguments.UsageError(description: "--pair takes the 6-digit code the phone shows, not '\(code)'")
        }
    }

    /// `--reconnect-backoff 0.05,0.1,0.2`: seconds between reconnect attempts (the last one
    /// repeats); nil when the option is absent.
    public static func reconnectBackoff(_ args: inout Arguments) throws -> [Double]? {
        guard let text = try args.string("reconnect-backoff") else { return nil }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        // (0 would reconnect in a tight loop against a relay that is down.)
        guard !values.isEmpty, values.allSatisfy({ $0.map { $0.isFinite && $0 >= 0.001 && $0 <= 3600 } ?? false }) else {
            throw Arguments.UsageError(
                description: "--reconnect-backoff must be seconds (0.001 to 3600) separated by commas, not '\(text)'")
        }
        return values.compactMap { $0 }
    }
}

/// `full`, `normal` or `off`.
public func SQLiteSynchronousName(_ name: String) -> SQLiteDatabase.Synchronous? {
    SQLiteDatabase.Synchronous.allCases.first { $0.rawValue.lowercased() == name.lowercased() }
}
