import Foundation
import LineProtocol
import Primitives
import RelayClient
import RelayCommand
import RelayProtocol
import Simulator
import TestClock
import WatchApp

/// `watchrelay watch --machine`: the console's commands answered as JSON lines, and every
/// ``WatchEvent`` as an event line (``MachineProtocol``).
///
/// Ordering: a response is printed after every event published before the command finished
/// (``HeadlessWatch/publishedEvents``), so a driver that sees `advance`'s response has
/// already seen the reloads it caused.
enum WatchMachine {
    /// Prints events and answers requests until `quit`, the end of stdin or a signal.
    static func run(_ watch: HeadlessWatch, manualClock: ManualClock?, until termination: TerminationSignal) async {
        let printed = EventCount()  // event lines printed, so a response can wait for them
        let lines = CLI.standardInputLines()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in watch.events {
                    StandardOutput.writeLine(line(event, now: watch.clock.now()))
                    printed.increment()
                }
                printed.finish()
            }
            await withTaskGroup(of: Void.self) { inner in
                inner.addTask { await termination.wait() }
                inner.addTask {
                    for await text in lines {
                        guard let parsed = MachineProtocol.parse(text) else { continue }
                        guard case .success(let request) = parsed else {
                            if case .failure(let bad) = parsed { StandardOutput.writeLine(MachineProtocol.failure(bad)) }
                            continue
                        }
                        let (answer, quit) = await run(request, on: watch, clock: manualClock)
                        await printed.wait(until: await watch.publishedEvents)
                        StandardOutput.writeLine(answer)
                        if quit { return }
                    }
                }
                await inner.next()
                inner.cancelAll()
            }
            // Stopping the watch finishes its event stream, which ends the printer.
            await watch.stop()
        }
    }

    /// Runs one request: its response line and whether it asked to stop.
    static func run(_ request: MachineProtocol.Request, on watch: HeadlessWatch, clock: ManualClock?) async -> (String, Bool) {
        let command: WatchConsoleCommand
        switch WatchConsoleCommand.parse(request.words) {
        case .success(let c): command = c
        case .failure(let e):
            return (MachineProtocol.failure(id: request.id, command: request.verb, code: "bad_request", message: e.description), false)
        }
        do {
            switch command {
            case .pair(let code):
                try await watch.pair(code: code)
                return (MachineProtocol.ok(request), false)
            case .delete(let login):
                try await watch.delete(login)
                return (MachineProtocol.ok(request, ["login": .string(login)]), false)
            case .open(let login):
                let screen = await watch.open(login)
                let now = watch.clock.now()
                return (MachineProtocol.ok(request, ["profile": screen.map { JSONRenderer.json($0, now: now) } ?? .null]), false)
            case .select(let login):
                try await watch.select(login)
                var fields: [String: JSONValue] = ["login": login.map(JSONValue.string) ?? .null]
                // Allowed (the rectangular widget then shows the first favorite), but said.
                if let login { fields["favorite"] = .bool(await watch.current.favorites.contains(login)) }
                return (MachineProtocol.ok(request, fields), false)
            case .foreground(let on):
                await watch.setForeground(on)
                return (MachineProtocol.ok(request, ["foreground": .bool(on)]), false)
            case .advance(let seconds):
                guard let clock else {
                    return (
                        MachineProtocol.failure(
                            id: request.id, command: request.verb, code: "no_manual_clock",
                            message: "advance needs a watch started with --manual-clock"),
                        false
                    )
                }
                clock.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
                let events = await watch.flush()
                return (MachineProtocol.ok(request, clockFields(watch).merging(["widgetEvents": .int(Int64(events.count))]) { $1 }), false)
            case .reload:
                await watch.requestReload()
                return (MachineProtocol.ok(request), false)
            case .flush:
                let events = await watch.flush()
                return (MachineProtocol.ok(request, ["widgetEvents": .int(Int64(events.count))]), false)
            case .widget:
                let state = await watch.current
                return (MachineProtocol.ok(request, ["widgets": .array(state.widgets.widgets.map(widget))]), false)
            case .state:
                let state = await watch.current
                let now = watch.clock.now()
                return (MachineProtocol.ok(request, clockFields(watch).merging(["state": JSONRenderer.json(state, now: now)]) { $1 }), false)
            case .status:
                let state = await watch.current
                return (
                    MachineProtocol.ok(
                        request,
                        clockFields(watch).merging([
                            "favorites": MachineProtocol.strings(state.favorites.users.map(\.login)),
                            "omitted": .int(Int64(state.favorites.omitted)),
                            "pendingDeletes": MachineProtocol.strings(state.favorites.pendingDeletes),
                            "foreground": .bool(state.widgets.isAppForeground), "manualClock": .bool(clock != nil),
                        ]) { $1 }),
                    false
                )
            case .sync:
                return (MachineProtocol.ok(request, ["caughtUp": .bool(await watch.caughtUpIfConnected())]), false)
            case .uninstall:
                // relayTold false: not connected, the phone still sees the app installed.
                let told = try await watch.uninstall()
                return (MachineProtocol.ok(request, ["uninstalled": .bool(true), "relayTold": .bool(told)]), true)
            case .help:
                let lines = WatchConsoleCommand.helpText.split(separator: "\n").map(String.init)
                return (MachineProtocol.ok(request, ["commands": MachineProtocol.strings(lines)]), false)
            case .quit:
                return (MachineProtocol.ok(request), true)
            }
        } catch {
            return (
                MachineProtocol.failure(id: request.id, command: request.verb, code: code(of: error), message: "\(error)"),
                false
            )
        }
    }

    /// `now` (ISO-8601) and `nowMs` of the watch's clock.
    private static func clockFields(_ watch: HeadlessWatch) -> [String: JSONValue] {
        let now = watch.clock.now()
        return ["now": .string(now.iso8601), "nowMs": .int(now.millisecondsSinceEpoch)]
    }

    /// A widget in short: id, family, the text it shows (lines then label), stale, generation.
    static func widget(_ w: WidgetInstance) -> JSONValue {
        [
            "id": .string(w.id), "family": .string(w.family.rawValue), "text": .string(text(w.content)),
            "stale": .bool(w.isStale), "generation": .int(Int64(w.generation)),
        ]
    }

    /// What a widget shows: its content lines, then its label, joined by `\n`.
    static func text(_ content: WidgetContent) -> String {
        (content.lines + (content.label.map { [$0] } ?? [])).joined(separator: "\n")
    }

    /// A short machine-readable code for a failed command.
    static func code(of error: any Error) -> String {
        switch error {
        case let e as RelaySessionError: e.code
        case let e as WatchAppError: e.code
        default: "failed"
        }
    }

    // MARK: - Events

    /// One event line for a watch event.
    static func line(_ event: WatchEvent, now: Timestamp) -> String {
        switch event {
        case .activated(let paired): return MachineProtocol.event("activated", ["paired": .bool(paired)])
        case .disconnected: return MachineProtocol.event("disconnected")
        case .paired(let peer): return MachineProtocol.event("paired", ["peer": .string(peer)])
        case .reachability(let r): return MachineProtocol.event("reachability", ["reachable": .bool(r)])
        case .companionAppInstalled(let installed):
            return MachineProtocol.event("companionAppInstalled", ["installed": .bool(installed)])
        case .snapshotStored(let revision, let logins, let omitted):
            var fields: [String: JSONValue] = ["revision": .int(revision), "favorites": MachineProtocol.strings(logins)]
            if omitted > 0 { fields["omitted"] = .int(Int64(omitted)) }
            return MachineProtocol.event("snapshot", fields)
        case .deleteAccepted(let login): return MachineProtocol.event("deleteAccepted", ["login": .string(login)])
        case .deleteCompleted(let login): return MachineProtocol.event("deleteCompleted", ["login": .string(login)])
        case .profile(let p): return MachineProtocol.event("profile", ["profile": JSONRenderer.json(p, now: now)])
        case .error(let failure):
            return MachineProtocol.event(
                "error", ["source": .string(failure.source), "code": .string(failure.code), "message": .string(failure.message)])
        case .widget(let w):
            var fields = MachineProtocol.members(JSONRenderer.json(w))
            let name = fields.removeValue(forKey: "type")?.stringValue ?? "widget"
            if case .reloaded(let r) = w, let first = r.entries.first {
                let content = WidgetContent(family: r.family, entry: first)
                fields["content"] = JSONRenderer.json(content)
                fields["text"] = .string(text(content))
            }
            if case .rendered(let e) = w { fields["text"] = .string(text(e.content)) }
            return MachineProtocol.event(name, fields)
        }
    }
}

