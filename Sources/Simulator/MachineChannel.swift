import Foundation
import LineProtocol
import Primitives
import RelayProtocol
import Synchronization

/// The line protocol with a `watchrelay phone|watch --machine` child (Simulator/README.md):
/// requests `{"id": N, "command": …, "args": […]}` on its stdin, and on its stdout a `ready`
/// line, one `response` per request (matched by id) and `event` lines.
///
/// Event lines go to `onEvent` on the reader thread, in order, before the response that
/// follows them is handed over — so whoever awaits a response has already seen the events
/// the child printed before it.
final class MachineChannel: Sendable {
    /// The child process.
    let process: ChildProcess
    /// The `ready` line's fields.
    let ready: [String: JSONValue]

    private let state: LockedState<State>

    private struct State {
        var nextID = 1
        var waiting: [String: CheckedContinuation<[String: JSONValue], any Error>] = [:]
        var ended = false
    }

    private init(process: ChildProcess, ready: [String: JSONValue]) {
        self.process = process
        self.ready = ready
        state = LockedState(State())
    }

    /// Starts the child and returns once it printed its `ready` line (within `timeout`).
    /// - Throws: ``StepFailure`` if it did not start, ended, or printed no `ready` line in time.
    static func start(
        name: String, executable: String, arguments: [String], logPath: String, timeout: Duration = .seconds(20),
        onEvent: @escaping @Sendable (String, [String: JSONValue]) -> Void
    ) async throws -> MachineChannel {
        let shared = SharedState()
        let process = try ChildProcess(
            name: name, executable: executable, arguments: arguments, logPath: logPath,
            onLine: { line in shared.receive(line, onEvent: onEvent) },
            onEnd: { shared.end() })
        do {
            let ready = try await shared.waitForReady(timeout: timeout, description: "\(name): its ready line")
            let channel = MachineChannel(process: process, ready: ready)
            shared.attach(channel)
            return channel
        } catch {
            await process.kill()
            throw StepFailure(
                expected: "'\(name)' (\(arguments.prefix(2).joined(separator: " "))) to start",
                seen: "\(error) \(process.termination ?? "") \(process.stderrTail())")
        }
    }

    /// Sends a request and returns the response's fields once `ok` is true.
    /// - Throws: ``ChildCommandError`` for an `ok: false` response (its code and message), or
    ///   ``StepFailure`` if the child ended or did not answer within `timeout`.
    func request(_ command: String, _ args: [String] = [], timeout: Duration = .seconds(30)) async throws -> [String: JSONValue] {
        let id = state.withLock { s -> Int in
            defer { s.nextID += 1 }
            return s.nextID
        }
        let line = MachineProtocol.requestLine(id: id, command: command, args: args)
        let response = try await withThrowingTaskGroup(of: [String: JSONValue]?.self) { group in
            group.addTask { try await self.response(to: String(id), sending: line) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw StepFailure(
                    expected: "'\(process.name)' to answer \(command) within \(timeout)", seen: "no answer")
            }
            return response
        }
        guard response["ok"]?.boolValue == true else {
            let error = response["error"]?.objectValue ?? [:]
            throw ChildCommandError(
                command: command, code: error["code"]?.stringValue ?? "failed",
                message: error["message"]?.stringValue ?? "\(response)")
        }
        return response
    }

    /// Registers for the response `id`, writes `line`, and waits; cancellation fails the wait.
    private func response(to id: String, sending line: String) async throws -> [String: JSONValue] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<[String: JSONValue], any Error>) in
                let refused: (any Error)? = state.withLock { s in
                    if s.ended { return StepFailure(expected: "'\(process.name)' running", seen: "it ended") }
                    if Task.isCancelled { return CancellationError() }
                    s.waiting[id] = c
                    return nil
                }
                if let refused { return c.resume(throwing: refused) }
                if !process.write(line: line) {
                    let c = state.withLock { $0.waiting.removeValue(forKey: id) }
                    c?.resume(throwing: StepFailure(expected: "'\(process.name)' to read its stdin", seen: "the pipe is closed"))
                }
            }
        } onCancel: {
            let c = state.withLock { $0.waiting.removeValue(forKey: id) }
            c?.resume(throwing: CancellationError())
        }
    }

    /// A response arrived (on the reader thread).
    fileprivate func resolve(_ id: String, _ response: [String: JSONValue]) {
        let c = state.withLock { $0.waiting.removeValue(forKey: id) }
        c?.resume(returning: response)
    }

    /// The child's output ended: every waiting request fails.
    fileprivate func end() {
        let all = state.withLock { s -> [CheckedContinuation<[String: JSONValue], any Error>] in
            s.ended = true
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        let why = process.termination.map { " (\($0))" } ?? ""
        for c in all {
            c.resume(throwing: StepFailure(expected: "'\(process.name)' to answer", seen: "it ended\(why)"))
        }
    }

    /// Waits for a child that was asked to exit (`uninstall`) to end with status 0; fails,
    /// naming how it ended, if it did not within `grace`. The caller ``kill()``s it after.
    func awaitExit(grace: Duration = .seconds(10)) async throws {
        await process.waitForEnd(grace: grace)
        let ended = process.termination
        guard ended == "exit status 0" else {
            throw StepFailure(expected: "'\(process.name)' to exit by itself (status 0)", seen: ended ?? "still running")
        }
    }

    /// SIGKILLs the child and waits until it is reaped.
    func kill() async {
        await process.kill()
    }
}

/// A failed command of a child (`"ok": false`): its code and message, e.g. `user_not_found`.
struct ChildCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    var command: String
    var code: String
    var message: String

    var description: String { "\(code): \(message)" }
}

/// What the reader thread needs before the channel exists (the `ready` line) and after (the
/// channel, for responses).
private final class SharedState: Sendable {
    private struct State {
        var channel: MachineChannel?
        var ready: [String: JSONValue]?
        var readyWaiter: CheckedContinuation<[String: JSONValue], any Error>?
        var ended = false
        /// Lines that are not JSON (a crash message on stdout), for the failure message.
        var noise: [String] = []
    }

    private let state = LockedState(State())

    func attach(_ channel: MachineChannel) {
        let ended = state.withLock { s -> Bool in
            s.channel = channel
            return s.ended
        }
        if ended { channel.end() }
    }

    func receive(_ line: String, onEvent: @Sendable (String, [String: JSONValue]) -> Void) {
        guard let output = MachineProtocol.Output(line: line) else {
            state.withLock { $0.noise = Array(($0.noise + [line]).suffix(3)) }
            return
        }
        switch output {
        case .event(let name, let object):
            onEvent(name, object)
        case .ready(let object):
            let waiter = state.withLock { s -> CheckedContinuation<[String: JSONValue], any Error>? in
                s.ready = object
                defer { s.readyWaiter = nil }
                return s.readyWaiter
            }
            waiter?.resume(returning: object)
        case .response(let id?, let object):
            let channel = state.withLock { $0.channel }
            channel?.resolve(id, object)
        case .response(nil, _), .other:
            break  // an answer to input without an id (nobody waits for it), or a newer line type
        }
    }

    func end() {
        let (channel, waiter, noise) = state.withLock { s in
            s.ended = true
            defer { s.readyWaiter = nil }
            return (s.channel, s.readyWaiter, s.noise)
        }
        waiter?.resume(throwing: StepFailure(expected: "a ready line", seen: "the process ended \(noise)"))
        channel?.end()
    }

    /// Waits (up to `timeout`) for the `ready` line.
    func waitForReady(timeout: Duration, description: String) async throws -> [String: JSONValue] {
        try await withThrowingTaskGroup(of: [String: JSONValue]?.self) { group in
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (c: CheckedContinuation<[String: JSONValue], any Error>) in
                        let now = self.state.withLock { s -> Result<[String: JSONValue], any Error>? in
                            if let ready = s.ready { return .success(ready) }
                            if s.ended { return .failure(StepFailure(expected: "a ready line", seen: "the process ended \(s.noise)")) }
                            if Task.isCancelled { return .failure(CancellationError()) }
                            s.readyWaiter = c
                            return nil
                        }
                        if let now { c.resume(with: now) }
                    }
                } onCancel: {
                    let c = self.state.withLock { s in
                        defer { s.readyWaiter = nil }
                        return s.readyWaiter
                    }
                    c?.resume(throwing: CancellationError())
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let ready = first else {
                throw StepFailure(expected: description, seen: "nothing within \(timeout)")
            }
            return ready
        }
    }
}

extension MachineChannel {
    /// `channel` if there is one and its process still runs; else the step failure that says
    /// so for `actor` (e.g. `watch 'w'`), with how the process ended and its last stderr.
    static func running(_ channel: MachineChannel?, _ actor: String) throws -> MachineChannel {
        guard let channel else { throw StepFailure(expected: "\(actor) running", seen: "stopped") }
        guard channel.process.isRunning else {
            let process = channel.process
            throw StepFailure(
                expected: "\(actor) running",
                seen: "its process \(process.pid) ended (\(process.termination ?? "?")): \(process.stderrTail())")
        }
        return channel
    }
}
