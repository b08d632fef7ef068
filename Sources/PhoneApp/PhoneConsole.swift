import Foundation
import Primitives
import RelayProtocol

/// Runs console commands against a ``PhoneCompanion`` and formats the answers as lines.
///
/// Every answer is one line beginning `ok <verb>`, `throttled <verb>` or `error <verb>`,
/// followed by logfmt `key=value` fields, so a script can read it; `list` prints one line per
/// favorite (or one JSON array with `--json`), and `pair` also prints the machine-readable
/// `pairing code: 123456` line first.
public enum PhoneConsole {
    /// What running a command produced.
    public struct Output: Sendable, Hashable {
        /// The lines to print, in order.
        public var lines: [String]
        /// Whether the command asked to stop.
        public var quit: Bool

        /// Creates an output.
        public init(lines: [String], quit: Bool = false) {
            self.lines = lines
            self.quit = quit
        }
    }

    /// Runs `command` on `companion` and returns its answer lines.
    public static func run(_ command: PhoneConsoleCommand, on companion: PhoneCompanion) async -> Output {
        let verb = command.verb
        do throws(PhoneError) {
            switch command {
            case .add(let login):
                let change = try await companion.add(login)
                return Output(lines: [ok(verb, [("login", login), ("added", "\(change.listChanged)")] + fields(change.sync))])
            case .remove(let login):
                let change = try await companion.remove(login)
                return Output(lines: [ok(verb, [("login", login), ("removed", "\(change.listChanged)")] + fields(change.sync))])
            case .move(let login, let index):
                let change = try await companion.move(login, to: index)
                return Output(lines: [
                    ok(verb, [("login", login), ("index", "\(change.index ?? index)"), ("moved", "\(change.listChanged)")] + fields(change.sync))
                ])
            case .list(let json):
                return Output(lines: listing(try await companion.favorites(), json: json))
            case .refresh:
                return Output(lines: [refreshLine(await companion.refresh())])
            case .repos(let login):
                let reply = try await companion.repos(of: login)
                let stale = reply.stale.map { [("stale", $0.code.rawValue)] } ?? []
                return Output(lines: [
                    ok(verb, [("login", login), ("repos", "\(reply.repos.count)"), ("fetched_at", reply.fetchedAt.iso8601)] + stale)
                ])
            case .pair:
                let code = try await companion.pair()
                return Output(lines: [
                    "pairing code: \(code.code)", ok(verb, [("code", code.code), ("expires_at", code.expiresAt.iso8601)]),
                ])
            case .status:
                let s = await companion.status()
                return Output(lines: [
                    ok(
                        verb,
                        [
                            ("activated", "\(s.activated)"), ("paired", "\(s.paired)"), ("reachable", "\(s.reachable)"),
                            ("watch_app_installed", "\(s.watchAppInstalled)"), ("revision", "\(s.revision)"), ("pushed_revision", "\(s.pushedRevision)"),
                            ("favorites", "\(s.favorites)"), ("omitted", "\(s.omitted)"),
                        ] + (s.pushError.map { [("push_error", $0.code), ("push_msg", $0.description)] } ?? []))
                ])
            case .uninstall:
                // relay_told false: not connected (as a watch not_told names), that watch still
                // sees the app installed.
                let result = await companion.uninstall()
                let notTold = result.relayTold ? [] : [("not_told", result.watchesNotTold.joined(separator: ","))]
                return Output(lines: [ok(verb, [("uninstalled", "true"), ("relay_told", "\(result.relayTold)")] + notTold)], quit: true)
            case .help:
                return Output(lines: PhoneConsoleCommand.helpText.split(separator: "\n").map(String.init))
            case .quit:
                return Output(lines: [ok(verb, [])], quit: true)
            }
        } catch {
            return Output(lines: [errorLine(verb, error)])
        }
    }

    /// The favorites as text (one line each: place, login, name, counts) or as one JSON array line.
    public static func listing(_ favorites: [Favorite], json: Bool) -> [String] {
        if json {
            return [String(decoding: JSONWriter.encode(.array(favorites.map(\.json))), as: UTF8.self)]
        }
        if favorites.isEmpty { return ["(no favorites)"] }
        return favorites.map { f in
            // Logins and names are GitHub's text: printed as a terminal shows them safely.
            guard let user = f.user else { return "\(f.position). \(TerminalText.printable(f.login))  (no data yet)" }
            let name = user.name.map { "  \(TerminalText.printable($0))" } ?? ""
            return "\(f.position). \(TerminalText.printable(user.login))\(name)  repos=\(user.publicRepos) followers=\(user.followers)"
        }
    }

    /// The answer line of a refresh.
    public static func refreshLine(_ result: RefreshResult) -> String {
        switch result {
        case .throttled(let retryAfter):
            return line("throttled", "refresh", [("retry_after_ms", "\(milliseconds(retryAfter))")])
        case .refreshed(let fetched, let failed, let sync):
            var kv = [("fetched", "\(fetched)"), ("failed", "\(failed.count)")]
            if !failed.isEmpty { kv.append(("failed_logins", failed.joined(separator: ","))) }
            return ok("refresh", kv + fields(sync))
        }
    }

    /// `ok <verb> k=v …`.
    public static func ok(_ verb: String, _ kv: [(String, String)]) -> String { line("ok", verb, kv) }

    /// `error <verb> source=… code=… msg="…"`.
    public static func errorLine(_ verb: String, _ error: PhoneError) -> String {
        line("error", verb, [("source", error.source), ("code", error.code), ("msg", error.description)])
    }

    static func fields(_ sync: SnapshotSync) -> [(String, String)] {
        [("sync", sync.name)] + (sync.revision.map { [("revision", "\($0)")] } ?? [])
            + (sync.omitted > 0 ? [("omitted", "\(sync.omitted)")] : [])
    }

    /// `<status> <verb> k=v …`, values quoted as logfmt needs.
    public static func line(_ status: String, _ verb: String, _ kv: [(String, String)]) -> String {
        ([status, verb] + kv.map { "\($0.0)=\(quote($0.1))" }).joined(separator: " ")
    }

    /// Quotes a logfmt value when it needs it (``TerminalText/logfmtValue(_:)``: values come
    /// from peers, and a control character is written as an escape, never raw).
    public static func quote(_ value: String) -> String {
        TerminalText.logfmtValue(value)
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
