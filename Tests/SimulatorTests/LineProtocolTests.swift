import Foundation
import GitExplorerPayloads
import Primitives
import RelayProtocol
import Testing

@testable import Simulator

/// A child whose stdout lines are collected.
final class LineChild: Sendable {
    let process: ChildProcess
    private let box: LineBox

    init(_ name: String, _ arguments: [String], directory: String) throws {
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests")
        let box = LineBox()
        self.box = box
        process = try ChildProcess(
            name: name, executable: binary, arguments: arguments, logPath: directory + "/\(name).stderr.log",
            onLine: { line in box.lines.withLock { $0.append(line) } }, onEnd: {})
    }

    /// Every line so far, parsed.
    var objects: [[String: JSONValue]] {
        box.lines.withLock { $0 }.compactMap { (try? JSONParser.parse(Array($0.utf8)))?.objectValue }
    }

    /// Waits (generously) until `predicate` holds for the lines so far; returns them.
    @discardableResult
    func wait(
        for what: String, _ predicate: ([[String: JSONValue]]) -> Bool
    ) async throws -> [[String: JSONValue]] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let all = objects
            if predicate(all) { return all }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no \(what) in: \(box.lines.withLock { $0 }.joined(separator: "\n")) \(process.stderrTail())")
        throw LineTimeout(what: what)
    }

    /// The responses so far.
    var responses: [[String: JSONValue]] { objects.filter { $0["type"] == "response" } }

    func send(_ line: String) {
        #expect(process.write(line: line))
    }
}

/// A line that did not come within the (generous) wait.
struct LineTimeout: Error {
    var what: String
}

/// The lines a child printed.
final class LineBox: Sendable {
    let lines = LockedState<[String]>([])
}

/// The `--machine` line protocol of `watchrelay phone` and `watchrelay watch`, spoken raw:
/// bad input gets a clear error line and the process keeps running; a response follows the
/// events its command caused; the end of stdin stops the process.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LineProtocolTests {
    func relay(_ directory: String) async throws -> RelayChildProcess {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests")
        return try await RelayChildProcess.start(executable: binary, port: 0, database: directory + "/relay.db")
    }

    @Test func badInputToThePhoneGetsAnErrorLineAndThePhoneKeepsRunning() async throws {
        let directory = NSTemporaryDirectory() + "watchrelay-lines-" + UUID().uuidString
        let relay = try await relay(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let phone = try LineChild(
            "phone",
            ["phone", "--machine", "--relay", relay.url, "--state", directory + "/phone", "--fixtures", Repo.fixtures,
             "--log-level", "error"],
            directory: directory)
        try await phone.wait(for: "ready") { $0.contains { $0["type"] == "ready" && $0["role"] == "phone" } }
        let bad = [
            "frobnicate",
            #"{"id":1,"#,
            #"{"id":2,"command":"move","args":["octocat","second"]}"#,
            #"{"id":3}"#,
            #"[1,2]"#,
            #"{"id":4,"command":"add","args":[{"login":"x"}]}"#,
            "add",
        ]
        for line in bad { phone.send(line) }
        phone.send(#"{"id":5,"command":"add","args":["octocat"]}"#)
        phone.send(#"{"id":6,"command":"list"}"#)
        let all = try await phone.wait(for: "the list") { $0.contains { $0["id"] == 6 } }
        let responses = all.filter { $0["type"] == "response" }
        #expect(responses.count == bad.count + 2, "one response per request: \(responses)")
        for response in responses.prefix(bad.count) {
            #expect(response["ok"] == false)
            #expect(response["error"]?["code"] == "bad_request", "\(response)")
            let message = response["error"]?["message"]?.stringValue
            #expect(message?.isEmpty == false)
        }
        let moveMessage = responses.first { $0["id"] == 2 }?["error"]?["message"]?.stringValue ?? ""
        #expect(moveMessage.contains("usage: move"), "\(moveMessage)")
        #expect(responses.contains { $0["id"] == 3 }, "the id is echoed when it could be read")
        #expect(responses.first { $0["id"] == 4 }?["command"] == "add", "and the command, when only its args were wrong")
        #expect(responses.first { $0["id"] == 5 }?["ok"] == true)
        #expect(responses.first { $0["id"] == 6 }?["logins"] == ["octocat"])
        // A command that fails (not bad input) names its code.
        phone.send(#"{"id":7,"command":"add","args":["no-such-user-404"]}"#)
        let failed = try await phone.wait(for: "the 404") { $0.contains { $0["id"] == 7 } }.first { $0["id"] == 7 }
        #expect(failed?["ok"] == false)
        #expect(failed?["error"]?["code"] == "user_not_found", "\(failed ?? [:])")
        #expect(phone.process.isRunning)
        await phone.process.kill()
        await relay.stop()
    }

    @Test func theWatchAnswersAfterTheEventsItsCommandCausedAndKeepsRunningAfterBadInput() async throws {
        let directory = NSTemporaryDirectory() + "watchrelay-lines-" + UUID().uuidString
        let relay = try await relay(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let watch = try LineChild(
            "watch",
            ["watch", "--machine", "--relay", relay.url, "--state", directory + "/watch", "--manual-clock",
             "1796000000000", "--log-level", "error"],
            directory: directory)
        try await watch.wait(for: "ready") { $0.contains { $0["type"] == "ready" && $0["role"] == "watch" } }
        for line in ["open", "advance soon", "advance -1", #"{"command":"state","args":"x"}"#, "teleport watch"] {
            watch.send(line)
        }
        // The first `advance` places the widgets: four first reloads, printed before its answer.
        watch.send(#"{"id":1,"command":"advance","args":[1]}"#)
        let all = try await watch.wait(for: "advance's answer") { $0.contains { $0["id"] == 1 } }
        let bad = all.filter { $0["type"] == "response" && $0["id"] == nil }
        #expect(bad.count == 5 && bad.allSatisfy { $0["error"]?["code"] == "bad_request" }, "\(bad)")
        #expect(bad.contains { $0["command"] == "state" }, "args that are not an array: the command is named")
        let answer = try #require(all.firstIndex { $0["id"] == 1 })
        #expect(all[answer]["ok"] == true)
        #expect(all[answer]["nowMs"] == 1_796_000_001_000)
        let reloads = all.indices.filter { all[$0]["event"] == "reloaded" }
        #expect(reloads.count == 4, "\(all)")
        #expect(reloads.allSatisfy { $0 < answer }, "every reload line comes before the answer")
        #expect(all[reloads[0]]["text"] != nil && all[reloads[0]]["reasons"] != nil)

        watch.send(#"{"id":2,"command":"state"}"#)
        let state = try await watch.wait(for: "the state") { $0.contains { $0["id"] == 2 } }.first { $0["id"] == 2 }
        #expect(state?["state"]?["widgets"]?["widgets"]?.arrayValue?.count == 4)

        // The end of stdin stops a machine-driven watch (its driver is gone).
        watch.process.closeInput()
        let deadline = ContinuousClock.now + .seconds(30)
        while watch.process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(watch.process.termination == "exit status 0")
        await relay.stop()
    }

    @Test func advanceWithoutAManualClockIsRefused() async throws {
        let directory = NSTemporaryDirectory() + "watchrelay-lines-" + UUID().uuidString
        let relay = try await relay(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let watch = try LineChild(
            "watch", ["watch", "--machine", "--relay", relay.url, "--state", directory + "/watch", "--log-level", "error"],
            directory: directory)
        try await watch.wait(for: "ready") { $0.contains { $0["type"] == "ready" } }
        watch.send(#"{"id":1,"command":"advance","args":["60"]}"#)
        watch.send(#"{"id":2,"command":"status"}"#)
        // An unpaired watch has nothing to catch up with: `sync` answers at once.
        watch.send(#"{"id":3,"command":"sync"}"#)
        let all = try await watch.wait(for: "status and sync") { $0.contains { $0["id"] == 3 } }
        #expect(all.first { $0["id"] == 1 }?["error"]?["code"] == "no_manual_clock")
        #expect(all.first { $0["id"] == 2 }?["ok"] == true)
        #expect(all.first { $0["id"] == 3 }?["ok"] == true)
        #expect(all.first { $0["id"] == 3 }?["caughtUp"] == false)
        await watch.process.kill()
        await relay.stop()
    }
}
