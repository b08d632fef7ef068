import Foundation
import GitExplorerPayloads
import RelayClient
import RelayProtocol
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a new user trips over, trying `watchrelay` by hand: each as a real process.
@Suite(.timeLimit(.minutes(4)))
struct NewUserTests {
    /// The phone side of a pair, as a plain session in the test.
    static func phoneSession(_ relay: TestRelay, _ state: TemporaryDirectory) throws -> RelaySession {
        try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: state.path("phone-session")))
    }

    /// A relay, a state directory and an activated phone session showing a pairing code.
    static func phoneWaitingToPair() async throws -> (TestRelay, TemporaryDirectory, RelaySession, PairingCode) {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phone = try phoneSession(relay, state)
        try await phone.activate()
        return (relay, state, phone, try await phone.beginPairing())
    }

    /// Pushes a snapshot of `logins` as revision `revision` from the phone session.
    static func push(_ phone: RelaySession, _ revision: Int64, _ logins: [String], omitted: Int = 0) async throws {
        let users = logins.enumerated().map { i, login in
            User(
                login: login, id: Int64(i + 1), avatarURL: "https://example.com/\(login).png",
                htmlURL: "https://github.com/\(login)", publicRepos: 1, followers: 1, following: 0)
        }
        try await phone.updateApplicationContext(FavoritesSnapshot(revision: revision, users: users, omitted: omitted).payload)
    }

    @Test func watchOnceShowsTheNewestStateTheRelayHoldsAndPrintsOnlyJSON() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phone = try Self.phoneSession(relay, state)
        try await phone.activate()
        let code = try await phone.beginPairing()
        let watchArgs = ["--relay", relay.url, "--state", state.path("watch"), "--once", "--json", "--wait-s", "20", "--log-level", "error"]
        // First run pairs; the phone pushes revision 1 once it sees the watch.
        let first = try ChildProcess(watchArgs + ["--pair", code.code], subcommand: "watch")
        defer { first.terminate() }
        try await withTimeout(20, "the watch to pair") {
            for await event in phone.events { if case .paired = event { return } }
        }
        try await Self.push(phone, 1, ["octocat"])
        let firstOut = try await first.output().joined(separator: "\n")
        #expect(try await first.exitStatus() == 0)
        // --json: stdout is one JSON document, no `paired` line before it.
        let firstJSON = try JSONParser.parse(Array(firstOut.utf8))
        #expect(firstJSON["favorites"]?["revision"] == 1, "\(firstOut)")

        // While the watch is away the phone pushes revision 2: the relay holds it.
        try await Self.push(phone, 2, ["octocat", "torvalds"])
        let (status, secondOut) = try await ChildProcess.run(watchArgs, subcommand: "watch")
        #expect(status == 0)
        let second = try JSONParser.parse(Array(secondOut.utf8))
        #expect(second["favorites"]?["revision"] == 2, "the stored revision 1 is stale: \(secondOut)")
        #expect(second["favorites"]?["users"]?.arrayValue?.count == 2)
        // And it was acked: the watch resumes after it (the saved lastSeq is its seq).
        let saved = try SQLiteSessionStore(directory: state.path("watch")).load()
        #expect(saved.lastSeq >= 2, "\(saved)")
        await phone.close()
        await relay.stop()
    }

    /// The live view prints the phone's name and logins, which come from the peer: an escape
    /// sequence or a bell in them shows as `\u{FFFD}` instead of reaching the terminal (it did).
    @Test func theWatchsLiveViewPrintsNoControlCharactersThePhoneSent() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .phone, deviceName: "i\u{1B}[2J\u{1B}]0;owned\u{07}Phone",
                stateDirectory: state.path("phone-session")))
        try await phone.activate()
        let code = try await phone.beginPairing()
        let watch = try Self.interactiveWatch(relay, state, pairing: code.code)
        defer { watch.terminate() }
        let line = try await watch.line(startingWith: "paired with")
        Self.expectPrintable(line)
        #expect(line.contains("\u{FFFD}[2J"), "\(line.debugDescription)")
        try await Self.end(watch, phone, relay)
    }

    /// Pairing with --pair printed `paired`, then `activated (paired: false)`, then `paired with
    /// iPhone`: the live view prints what was published before it started after that first line.
    /// The lines say what happened, in its order: activated unpaired, then paired.
    @Test func theInteractiveWatchSaysActivatedThenPairedInTheirOrder() async throws {
        let (relay, state, phone, code) = try await Self.phoneWaitingToPair()
        let watch = try Self.interactiveWatch(relay, state, pairing: code.code)
        defer { watch.terminate() }
        let lines = try await watch.lines(through: "paired with")
        let pairing = lines.filter { $0.hasPrefix("activated") || $0.hasPrefix("paired") }
        #expect(pairing == ["activated (paired: false)", "paired with iPhone"], "\(lines)")
        try await Self.end(watch, phone, relay)
    }

    /// The watch's console answers print the phone's logins too: `status` lists them, and a
    /// `delete` of a login the watch does not list says which it does. An escape sequence in a
    /// login shows as `\u{FFFD}` there as in the live view (it reached the terminal).
    @Test func theWatchsConsoleAnswersPrintNoControlCharactersThePhoneSent() async throws {
        let (relay, state, phone, code) = try await Self.phoneWaitingToPair()
        let watch = try Self.interactiveWatch(relay, state, pairing: code.code)
        defer { watch.terminate() }
        try await withTimeout(20, "the watch to pair") {
            for await event in phone.events { if case .paired = event { return } }
        }
        try await Self.push(phone, 1, ["octo\u{1B}[2Jcat", "tor\u{1B}]0;owned\u{07}valds"])
        _ = try await watch.line(startingWith: "snapshot r1 stored")
        watch.type("status")
        let status = try await watch.line(startingWith: "favorites r1")
        watch.type("delete nobody")
        let error = try await watch.line(startingWith: "error: nobody is not a favorite")
        for line in [status, error] {
            Self.expectPrintable(line)
            #expect(line.contains("octo\u{FFFD}[2Jcat"), "\(line.debugDescription)")
        }
        try await Self.end(watch, phone, relay)
    }

    /// `watchrelay watch` on its console (not `--once`), pairing with `code`.
    static func interactiveWatch(_ relay: TestRelay, _ state: TemporaryDirectory, pairing code: String) throws -> ChildProcess {
        try ChildProcess(
            ["--relay", relay.url, "--state", state.path("watch"), "--pair", code, "--log-level", "error"], subcommand: "watch")
    }

    /// A line holds no control character (C0 or DEL).
    static func expectPrintable(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            !line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(line.debugDescription)",
            sourceLocation: sourceLocation)
    }

    /// Ends the watch by its input, then the phone and the relay.
    static func end(_ watch: ChildProcess, _ phone: RelaySession, _ relay: TestRelay) async throws {
        watch.closeInput()
        _ = try await watch.exitStatus()
        await phone.close()
        await relay.stop()
    }

    /// `watchrelay pair` pairs the state directories the GitExplorer phone and watch run on too
    /// (the watch used to keep its session one directory down, so it started unpaired).
    @Test func watchrelayPairPairsTheHeadlessWatchsStateDirectory() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let (pairStatus, _) = try await ChildProcess.run(
            ["--relay", relay.url, "--phone-state", state.path("phone"), "--watch-state", state.path("watch")], subcommand: "pair")
        #expect(pairStatus == 0)
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: state.path("phone")))
        try await phone.activate()
        try await Self.push(phone, 1, ["octocat"])
        let (status, out) = try await ChildProcess.run(
            ["--relay", relay.url, "--state", state.path("watch"), "--once", "--json", "--wait-s", "20", "--log-level", "error"],
            subcommand: "watch")
        #expect(status == 0)
        #expect(try JSONParser.parse(Array(out.utf8))["favorites"]?["revision"] == 1, "\(out)")
        await phone.close()
        await relay.stop()
    }

    /// `watch --json` while interactive: every stdout line is JSON (the widgets, `state`,
    /// `open`); events, answers, errors and help go to standard error.
    @Test func theInteractiveWatchInJSONModePrintsOnlyJSONOnStdout() async throws {
        let (relay, state, phone, code) = try await Self.phoneWaitingToPair()
        let watch = try ChildProcess(
            ["--relay", relay.url, "--state", state.path("watch"), "--json", "--pair", code.code, "--log-level", "error"],
            subcommand: "watch")
        defer { watch.terminate() }
        try await withTimeout(20, "the watch to pair") {
            for await event in phone.events { if case .paired = event { return } }
        }
        try await Self.push(phone, 1, ["octocat"])
        _ = try await watch.line(startingWith: #"{""#)
        for command in ["bogus", "help", "sync", "state", "quit"] { watch.type(command) }
        let lines = try await watch.output().filter { !$0.isEmpty }
        #expect(try await watch.exitStatus() == 0)
        #expect(lines.count >= 1, "the answer to state: \(lines)")
        for line in lines {
            #expect((try? JSONParser.parse(Array(line.utf8))) != nil, "not JSON on stdout: \(line)")
        }
        await phone.close()
        await relay.stop()
    }

    /// `watchrelay help SUB` is SUB's help; stray words and unknown list values are usage
    /// errors (`demo extra` ran the demo; `--scenarios bogus` did not say what is allowed).
    @Test func helpForASubcommandAndStrayWordsAndListValues() async throws {
        let (status, help) = try await ChildProcess.run(["serve"], subcommand: "help")
        #expect(status == 0)
        #expect(help.hasPrefix("USAGE: watchrelay serve"), "\(help)")
        #expect(try await ChildProcess.run(["extra"], subcommand: "demo").status == 2)
        #expect(try await ChildProcess.run(["extra"], subcommand: "bench-core").status == 2)
        #expect(try await ChildProcess.run(["--scenarios", "bogus"], subcommand: "bench").status == 2)
        #expect(try await ChildProcess.run(["--single-node", "--port", "0"], subcommand: "serve").status == 2)
        // `--wait-s abc` waited 5 s; `--machine --json` ignored --json.
        let relay = ["--relay", "ws://127.0.0.1:1/v1"]
        #expect(try await ChildProcess.run(relay + ["--once", "--wait-s", "abc"], subcommand: "watch").status == 2)
        #expect(try await ChildProcess.run(relay + ["--wait-s", "1"], subcommand: "watch").status == 2)
        #expect(try await ChildProcess.run(relay + ["--machine", "--json"], subcommand: "watch").status == 2)
        // The watch takes `--reconnect-backoff` as the phone does (a scenario's watch child
        // slept 5 s between attempts, past the step's wait), and both refuse a list with a hole.
        for subcommand in ["watch", "phone"] {
            let status = try await ChildProcess.run(relay + ["--reconnect-backoff", "0.05,,1"], subcommand: subcommand).status
            #expect(status == 2, "\(subcommand)")
        }
        #expect(try await ChildProcess.run(["--help"], subcommand: "watch").output.contains("--reconnect-backoff"))
    }

    /// `delete` and `select` of a login that is not a favorite used to print nothing at all;
    /// `status` printed the whole state as JSON.
    @Test func theInteractiveWatchSaysWhenALoginIsNotAFavorite() async throws {
        let (relay, state, phone, code) = try await Self.phoneWaitingToPair()
        let watch = try ChildProcess(
            ["--relay", relay.url, "--state", state.path("watch"), "--pair", code.code, "--log-level", "error"], subcommand: "watch")
        defer { watch.terminate() }
        try await withTimeout(20, "the watch to pair") {
            for await event in phone.events { if case .paired = event { return } }
        }
        try await Self.push(phone, 1, ["octocat"])
        _ = try await watch.line(startingWith: "snapshot r1 stored")
        watch.type("delete nobody")
        #expect(try await watch.line(startingWith: "error: ") == "error: nobody is not a favorite (octocat)")
        watch.type("select nobody")
        #expect(try await watch.line(startingWith: "note: ").hasPrefix("note: nobody is not a favorite"))
        // `status` is the short summary its help promises (it printed the whole state as JSON).
        watch.type("status")
        #expect(try await watch.line(startingWith: "favorites ") == "favorites r1: octocat")
        _ = try await watch.line(startingWith: "foreground; clock ")
        watch.type("quit")
        #expect(try await watch.exitStatus() == 0)
        await phone.close()
        await relay.stop()
    }

    /// Mistakes that used to run on (and time out, or pair a directory with itself): a
    /// relay URL that is not a WebSocket's, one directory for both sides. Usage errors, at once.
    @Test func aNonWebSocketRelayURLOrOneDirectoryForBothSidesIsAUsageError() async throws {
        let state = TemporaryDirectory()
        let (watchStatus, _) = try await ChildProcess.run(["--relay", "http://127.0.0.1:1", "--state", state.path("w")], subcommand: "watch")
        #expect(watchStatus == 2)
        let (pairHTTP, _) = try await ChildProcess.run(
            ["--relay", "http://127.0.0.1:1", "--phone-state", state.path("p"), "--watch-state", state.path("w")], subcommand: "pair")
        #expect(pairHTTP == 2)
        let (pairSame, _) = try await ChildProcess.run(
            ["--relay", "ws://127.0.0.1:1/v1", "--phone-state", state.path("x"), "--watch-state", state.path("x") + "/"], subcommand: "pair")
        #expect(pairSame == 2)
        // `--pair abc` used to reach the relay, be refused as "no such pairing code" and count
        // towards the pairing lockout.
        let (badCode, _) = try await ChildProcess.run(
            ["--relay", "ws://127.0.0.1:1/v1", "--state", state.path("w"), "--pair", "12 345"], subcommand: "watch")
        #expect(badCode == 2)
        // A stray word after serve (`watchrelay-relay phone`) used to start a relay on 8765.
        let (serveStray, _) = try await ChildProcess.run(["phone", "--port", "0"], subcommand: "serve")
        #expect(serveStray == 2)
    }

    /// `ready` is the first line of `phone --machine`, as Simulator/README.md says: the
    /// `activated` event of the start came before it.
    @Test func thePhoneMachinesFirstLineIsReady() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phone = try ChildProcess(["--relay", relay.url, "--state", state.path("phone"), "--machine", "--log-level", "error"])
        defer { phone.terminate() }
        phone.closeInput()  // the end of input stops it once started
        let lines = try await phone.output()
        #expect(try await phone.exitStatus() == 0)
        let first = try JSONParser.parse(Array(try #require(lines.first).utf8))
        #expect(first["type"] == "ready", "\(lines)")
        #expect(lines.dropFirst().contains { $0.contains(#""event":"activated""#) }, "\(lines)")
        await relay.stop()
    }

    @Test func theWatchMachineAnswersPairOnlyAfterThePairedEvent() async throws {
        let (relay, state, phone, code) = try await Self.phoneWaitingToPair()
        let watch = try ChildProcess(
            ["--relay", relay.url, "--state", state.path("watch"), "--machine", "--log-level", "error"], subcommand: "watch")
        defer { watch.terminate() }
        _ = try await watch.line(startingWith: #"{"#)
        watch.type(#"{"id":1,"command":"pair","args":["\#(code.code)"]}"#)
        var seen: [JSONValue] = []
        while true {
            let line = try await watch.line(startingWith: "{")
            let object = try JSONParser.parse(Array(line.utf8))
            seen.append(object)
            if object["type"] == "response" && object["id"] == 1 { break }
        }
        #expect(seen.last?["ok"] == true)
        #expect(seen.dropLast().contains { $0["type"] == "event" && $0["event"] == "paired" }, "\(seen)")
        // A login the watch does not list: the interactive watch's error, as a failure (it
        // answered ok and sent nothing); `select` of one is allowed and said.
        try await withTimeout(20, "the phone to see the pair") {
            for await event in phone.events { if case .paired = event { return } }
        }
        try await Self.push(phone, 1, ["octocat"], omitted: 4)
        // A list the phone cut says so in its event (PROTOCOL.md §12.2).
        let snapshot = try JSONParser.parse(Array(try await watch.line(startingWith: #"{"event":"snapshot""#).utf8))
        #expect(snapshot["omitted"] == 4, "\(snapshot)")
        func response(_ id: Int) async throws -> JSONValue {
            while true {
                let object = try JSONParser.parse(Array(try await watch.line(startingWith: "{").utf8))
                if object["type"] == "response" && object["id"] == .int(Int64(id)) { return object }
            }
        }
        watch.type(#"{"id":2,"command":"delete","args":["nobody"]}"#)
        let refused = try await response(2)
        #expect(refused["ok"] == false && refused["error"]?["code"] == "not_a_favorite", "\(refused)")
        #expect(refused["error"]?["message"] == "nobody is not a favorite (octocat)")
        watch.type(#"{"id":3,"command":"select","args":["nobody"]}"#)
        let selected = try await response(3)
        #expect(selected["ok"] == true && selected["favorite"] == false, "\(selected)")
        watch.closeInput()
        #expect(try await watch.exitStatus() == 0)
        await phone.close()
        await relay.stop()
    }

    @Test func theInteractivePhoneSaysWhenAWatchPairsAndStopsAtTheEndOfInput() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phone = try ChildProcess(
            ["--relay", relay.url, "--state", state.path("phone"), "--pair", "--log-level", "error"])
        defer { phone.terminate() }
        let code = String(try await phone.line(startingWith: "pairing code: ").dropFirst("pairing code: ".count))
        let watch = try await RawWatch.pair(relay: relay.url, code: code)
        #expect(try await phone.line(startingWith: "event paired").contains("peer="))
        phone.type("add octocat")
        phone.closeInput()
        #expect(try await phone.line(startingWith: "ok add").contains("login=octocat"))
        #expect(try await phone.exitStatus() == 0)
        await watch.close()
        await relay.stop()
    }

    @Test func aCopiedBinaryServesTheFixturesAndRunsThePhoneFromAnyDirectory() async throws {
        let place = TemporaryDirectory()
        let elsewhere = TemporaryDirectory()
        let copy = place.path("watchrelay")
        try copyExecutable(watchrelayBinary, to: copy)

        let stub = try await spawnRetryingWhileBusy {
            try ChildProcess(
                ["--port", "0", "--log-level", "error"], subcommand: "github-stub", executable: copy,
                directory: elsewhere.path)
        }
        defer { stub.terminate() }
        let base = try await stub.line(startingWith: "http://127.0.0.1:")
        let (body, response) = try await URLSession(configuration: .ephemeral).data(
            from: try #require(URL(string: base + "/users/torvalds")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSONParser.parse(Array(body))["login"] == "torvalds")
        stub.signal(SIGTERM)
        #expect(try await stub.exitStatus() == 0)

        // `echo add octocat | watchrelay phone …` from that directory: the built-in fixture
        // server answers, and the end of stdin ends the phone.
        let relay = try await TestRelay.start()
        let phone = try ChildProcess(
            ["--relay", relay.url, "--state", elsewhere.path("phone"), "--log-level", "error"], executable: copy,
            directory: elsewhere.path)
        defer { phone.terminate() }
        phone.type("add octocat")
        phone.closeInput()
        let added = try await phone.line(startingWith: "ok add")
        #expect(added.contains("login=octocat"), "\(added)")
        #expect(try await phone.exitStatus() == 0)
        await relay.stop()

        // A scenario too, with the built-in fixtures (it used to ask for --fixtures).
        let scenario = repositoryRoot.appendingPathComponent("Simulator/scenarios/widget-refresh.json").path
        let simulate = try ChildProcess([scenario], subcommand: "simulate", executable: copy, directory: elsewhere.path)
        defer { simulate.terminate() }
        let report = try await simulate.output()
        #expect(try await simulate.exitStatus() == 0, "\(report)")
        #expect(report.contains("1 passed, 0 failed"), "\(report)")
    }
}

/// Copies `source` to `destination` (mode 0755) through a descriptor opened close-on-exec, so a
/// child another test forks meanwhile does not keep the new file open for writing.
private func copyExecutable(_ source: String, to destination: String) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    let fd = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw TestFailure("cannot create \(destination): errno \(errno)") }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw TestFailure("short write of \(destination)") }
}

/// Runs `spawn`, again after a short pause while exec fails with "Text file busy" (ETXTBSY): a
/// process forked by a parallel test holds the just-written binary open until its own exec.
private func spawnRetryingWhileBusy(_ spawn: () throws -> ChildProcess) async throws -> ChildProcess {
    for _ in 0..<50 {
        do {
            return try spawn()
        } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
            try await Task.sleep(for: .milliseconds(20))
        }
    }
    return try spawn()
}
