import PhoneApp
import Testing

/// The console's commands, as stdin lines and as subcommands.
struct PhoneConsoleTests {
    @Test(arguments: [
        ("add octocat", PhoneConsoleCommand.add("octocat")),
        ("rm octocat", .remove("octocat")),
        ("delete octocat", .remove("octocat")),
        ("move mattt 0", .move("mattt", to: 0)),
        ("reorder mattt 2", .move("mattt", to: 2)),
        ("list", .list(json: false)),
        ("list --json", .list(json: true)),
        ("  refresh  ", .refresh),
        ("repos octocat", .repos("octocat")),
        ("pair", .pair),
        ("status", .status),
        ("exit", .quit),
    ])
    func linesParse(line: String, command: PhoneConsoleCommand) throws {
        #expect(try PhoneConsoleCommand.parse(line: line)?.get() == command)
    }

    @Test(arguments: ["add", "add a b", "move a", "move a -1", "move a x", "list --yaml", "pair now", "fly"])
    func badLinesAreUsageErrors(line: String) {
        guard case .failure? = PhoneConsoleCommand.parse(line: line) else {
            Issue.record("'\(line)' parsed")
            return
        }
    }

    @Test func severalLoginsAreRefusedSayingOneAtATime() {
        #expect(
            PhoneConsoleCommand.parse(["add", "octocat", "mattt"])
                == .failure(PhoneConsoleCommand.ParseError("usage: add <login>: one login at a time (got 2: octocat, mattt)")))
        #expect(PhoneConsoleCommand.parse(["rm"]) == .failure(PhoneConsoleCommand.ParseError("usage: rm <login>")))
    }

    /// `phone add torvalds --json` said "one login at a time (got 2: torvalds, --json)": the
    /// option was taken for a login. It names what --json is for.
    @Test(arguments: [["add", "torvalds", "--json"], ["rm", "--json", "torvalds"], ["move", "torvalds", "0", "--json"], ["status", "--json"]])
    func jsonOnACommandOtherThanListSaysItIsForList(words: [String]) {
        let verb = words[0]
        #expect(
            PhoneConsoleCommand.parse(words)
                == .failure(PhoneConsoleCommand.ParseError("--json is for list (`list --json`), not \(verb)")))
    }

    @Test func blankLinesAndCommentsAreSkipped() {
        #expect(PhoneConsoleCommand.parse(line: "") == nil)
        #expect(PhoneConsoleCommand.parse(line: "   ") == nil)
        #expect(PhoneConsoleCommand.parse(line: "# add octocat") == nil)
    }

    @Test func answerLinesAreLogfmt() {
        #expect(PhoneConsole.ok("add", [("login", "octocat"), ("sync", "pushed")]) == "ok add login=octocat sync=pushed")
        #expect(
            PhoneConsole.errorLine("add", .invalidLogin("a b"))
                == #"error add source=input code=invalid_login msg="'a b' is not a GitHub login""#)
        // A script's runaway argument is not echoed whole (a 5 MB login was, on one line).
        let huge = PhoneError.invalidLogin(String(repeating: "a", count: 5_000_000)).description
        #expect(huge == "'\(String(repeating: "a", count: 40))…' (5000000 bytes) is not a GitHub login")
        #expect(PhoneConsole.refreshLine(.throttled(retryAfter: .milliseconds(8_500))) == "throttled refresh retry_after_ms=8500")
    }

    @Test func listingShowsUsersWithoutDataToo() {
        let lines = PhoneConsole.listing(
            [Favorite(login: "octocat", position: 0, user: testUser("octocat")), Favorite(login: "newbie", position: 1)],
            json: false)
        #expect(lines == ["0. octocat  Octocat  repos=3 followers=1", "1. newbie  (no data yet)"])
    }

    /// Values come from peers and GitHub: a control character is written as an escape, never
    /// raw (an escape sequence in a watch's name reached the terminal, and a carriage return
    /// rewrote the line).
    @Test func peerTextInAnswerLinesIsEscaped() {
        #expect(PhoneConsole.line("event", "paired", [("peer", "Apple\u{1B}[2JWatch")]) == #"event paired peer="Apple\u001b[2JWatch""#)
        #expect(PhoneConsole.quote("a\r\nb\tc") == #""a\r\nb\tc""#)
        #expect(PhoneConsole.quote("x\u{202E}y") == #""x\u202ey""#)
        #expect(PhoneConsole.quote("plain") == "plain")
        var user = testUser("octocat")
        user.name = "Octo\u{1B}]0;owned\u{07}cat"
        let lines = PhoneConsole.listing([Favorite(login: "octocat", position: 0, user: user)], json: false)
        #expect(lines == ["0. octocat  Octo\u{FFFD}]0;owned\u{FFFD}cat  repos=3 followers=1"])
    }
}
