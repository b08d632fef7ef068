import Foundation
import LineProtocol
import PhoneApp
import Primitives
import RelayCommand
import RelayProtocol
import RelayServer

/// `watchrelay phone --machine`: the console's commands answered as JSON lines, and the
/// companion's activity and errors as event lines (``MachineProtocol``).
enum PhoneMachine {
    /// Runs stdin requests until `quit` (true) or the end of input (false, which also stops a
    /// machine-driven companion: its driver is gone).
    static func console(_ companion: PhoneCompanion, lines: AsyncStream<String>) async -> Bool {
        for await line in lines {
            guard let parsed = MachineProtocol.parse(line) else { continue }
            switch parsed {
            case .failure(let bad):
                StandardOutput.writeLine(MachineProtocol.failure(bad))
            case .success(let request):
                let (answer, quit) = await run(request, on: companion)
                StandardOutput.writeLine(answer)
                if quit { return true }
            }
        }
        return false
    }

    /// Runs one request; its response line and whether it asked to stop.
    static func run(_ request: MachineProtocol.Request, on companion: PhoneCompanion) async -> (String, Bool) {
        let command: PhoneConsoleCommand
        switch PhoneConsoleCommand.parse(request.words) {
        case .success(let c): command = c
        case .failure(let e):
            return (MachineProtocol.failure(id: request.id, command: request.verb, code: "bad_request", message: e.description), false)
        }
        do throws(PhoneError) {
            switch command {
            case .add(let login):
                return (MachineProtocol.ok(request, change(login, try await companion.add(login))), false)
            case .remove(let login):
                return (MachineProtocol.ok(request, change(login, try await companion.remove(login))), false)
            case .move(let login, let index):
                let moved = try await companion.move(login, to: index)
                var fields = change(login, moved)
                fields["index"] = .int(Int64(moved.index ?? index))
                return (MachineProtocol.ok(request, fields), false)
            case .list:
                let favorites = try await companion.favorites()
                return (
                    MachineProtocol.ok(
                        request,
                        ["favorites": .array(favorites.map(\.json)), "logins": MachineProtocol.strings(favorites.map(\.login))]),
                    false
                )
            case .refresh:
                return (MachineProtocol.ok(request, refresh(await companion.refresh())), false)
            case .repos(let login):
                let reply = try await companion.repos(of: login)
                var fields: [String: JSONValue] = [
                    "login": .string(reply.login), "repos": MachineProtocol.strings(reply.repos.map(\.name)),
                    "fetchedAt": .string(reply.fetchedAt.iso8601),
                ]
                if let stale = reply.stale { fields["stale"] = stale.json }
                return (MachineProtocol.ok(request, fields), false)
            case .pair:
                let code = try await companion.pair()
                let fields: [String: JSONValue] = ["code": .string(code.code), "expiresAt": .string(code.expiresAt.iso8601)]
                StandardOutput.writeLine(MachineProtocol.event("pairingCode", fields))
                return (MachineProtocol.ok(request, fields), false)
            case .status:
                let s = await companion.status()
                return (
                    MachineProtocol.ok(
                        request,
                        [
                            "activated": .bool(s.activated), "paired": .bool(s.paired), "reachable": .bool(s.reachable),
                            "watchAppInstalled": .bool(s.watchAppInstalled), "revision": .int(s.revision), "pushedRevision": .int(s.pushedRevision),
                            "favorites": .int(Int64(s.favorites)), "omitted": .int(Int64(s.omitted)),
                            "pushError": s.pushError.map { ["code": .string($0.code), "message": .string($0.description)] } ?? .null,
                        ]),
                    false
                )
            case .uninstall:
                // relayTold false: not connected (as each watch of notTold), that watch still sees
                // the app installed.
                let result = await companion.uninstall()
                let fields: [String: JSONValue] = [
                    "uninstalled": .bool(true), "relayTold": .bool(result.relayTold),
                    "notTold": MachineProtocol.strings(result.watchesNotTold),
                ]
                return (MachineProtocol.ok(request, fields), true)
            case .help:
                let lines = PhoneConsoleCommand.helpText.split(separator: "\n").map(String.init)
                return (MachineProtocol.ok(request, ["commands": MachineProtocol.strings(lines)]), false)
            case .quit:
                return (MachineProtocol.ok(request), true)
            }
        } catch {
            return (
                MachineProtocol.failure(
                    id: request.id, command: request.verb, code: error.code, message: error.description, source: error.source),
                false
            )
        }
    }

    private static func change(_ login: String, _ change: FavoriteChange) -> [String: JSONValue] {
        ["login": .string(login), "changed": .bool(change.listChanged)].merging(sync(change.sync)) { $1 }
    }

    /// `sync`, and `revision` and `omitted` when there are.
    private static func sync(_ sync: SnapshotSync) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["sync": .string(sync.name)]
        if let revision = sync.revision { fields["revision"] = .int(revision) }
        if sync.omitted > 0 { fields["omitted"] = .int(Int64(sync.omitted)) }
        return fields
    }

    private static func refresh(_ result: RefreshResult) -> [String: JSONValue] {
        switch result {
        case .throttled(let retryAfter):
            return ["throttled": true, "retryAfterMs": .int(retryAfter.components.seconds * 1000 + retryAfter.components.attoseconds / 1_000_000_000_000_000)]
        case .refreshed(let fetched, let failed, let sync):
            let fields: [String: JSONValue] = [
                "throttled": false, "fetched": .int(Int64(fetched)), "failed": MachineProtocol.strings(failed),
            ]
            return fields.merging(Self.sync(sync)) { $1 }
        }
    }

    // MARK: - Events

    /// Prints the companion's activity and errors as event lines until both streams end
    /// (``PhoneCompanion/shutdown()`` finishes them). A change of the list also carries the
    /// favorites in order, as they are when the line is printed.
    /// The error events also go to `log` (stderr, logfmt), as in console mode: stdout stays JSON.
    static func reporters(_ companion: PhoneCompanion, log: Logger, after ready: Task<Void, Never>) -> [Task<Void, Never>] {
        // Events wait in the companion's streams until `ready` is out: it is the first line.
        let activity = Task {
            await ready.value
            for await activity in companion.activity {
                var (name, fields) = event(activity)
                switch activity {
                case .snapshotPushed, .deletedByWatch, .externalChange:
                    if let favorites = try? await companion.favorites() {
                        fields["favorites"] = MachineProtocol.strings(favorites.map(\.login))
                    }
                default: break
                }
                StandardOutput.writeLine(MachineProtocol.event(name, fields))
            }
        }
        let errors = Task {
            await ready.value
            for await error in companion.errors {
                var line = log
                line.fields += [("source", error.source), ("code", error.code)]
                line.warning(error.description)
                StandardOutput.writeLine(
                    MachineProtocol.event(
                        "error",
                        ["source": .string(error.source), "code": .string(error.code), "message": .string(error.description)]))
                if error.code == "disconnected" { StandardOutput.writeLine(MachineProtocol.event("disconnected")) }
            }
        }
        return [activity, errors]
    }

    /// An activity as an event name and fields.
    static func event(_ activity: PhoneActivity) -> (String, [String: JSONValue]) {
        switch activity {
        case .activated(let paired): return ("activated", ["paired": .bool(paired)])
        case .paired(let peer): return ("paired", ["peer": .string(peer)])
        case .unpaired(let reason): return ("unpaired", ["reason": .string(reason)])
        case .reachabilityChanged(let reachable): return ("reachability", ["reachable": .bool(reachable)])
        case .snapshotPushed(let revision, let users, let omitted):
            return ("snapshotPushed", ["revision": .int(revision), "users": .int(Int64(users)), "omitted": .int(Int64(omitted))])
        case .refreshed(let trigger, let result):
            var fields = refresh(result)
            fields["trigger"] = .string(trigger.rawValue)
            return ("refreshed", fields)
        case .deletedByWatch(let login, let removed): return ("deletedByWatch", ["login": .string(login), "removed": .bool(removed)])
        case .answeredRepos(let login, let repos, let error):
            var fields: [String: JSONValue] = ["login": .string(login)]
            if let repos { fields["repos"] = .int(Int64(repos)) }
            if let error { fields["error"] = .string(error.rawValue) }
            return ("answeredRepos", fields)
        case .externalChange(let favorites): return ("externalChange", ["count": .int(Int64(favorites))])
        }
    }
}
