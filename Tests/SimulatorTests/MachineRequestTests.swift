import LineProtocol
import RelayProtocol
import Testing

/// How a `--machine` stdin line is read: the console's words, a JSON object, or bad input.
struct MachineRequestTests {
    /// `"str"`, `42` and `true` were read as console words (`unknown command '"str"'`) while
    /// `[1,2]` got this error: every JSON value that is not an object gets it.
    @Test(arguments: [#""str""#, "42", "-1.5", "true", "false", "null", "[1,2]", #"  "status"  "#])
    func aJSONValueThatIsNotAnObjectIsBadInput(line: String) {
        guard case .failure(let bad)? = MachineProtocol.parse(line) else {
            Issue.record("'\(line)' was read as a request")
            return
        }
        #expect(bad.message == "a request must be a JSON object", "\(line)")
        #expect(bad.id == nil && bad.command == nil)
    }

    /// The console's words still work, and a JSON object is a request.
    @Test(arguments: [
        ("status", ["status"]), ("add octocat", ["add", "octocat"]), ("advance 1", ["advance", "1"]),
        ("  open\tmattt ", ["open", "mattt"]), (#"{"id":3,"command":"add","args":["x",2]}"#, ["add", "x", "2"]),
    ])
    func wordsAndObjectsAreRequests(line: String, words: [String]) throws {
        let request = try #require(try MachineProtocol.parse(line)?.get())
        #expect(request.words == words)
    }

    /// What begins as an object or an array and does not parse is not JSON; blank lines and
    /// comments are no request.
    @Test func brokenJSONIsNotJSONAndCommentsAreSkipped() {
        guard case .failure(let bad)? = MachineProtocol.parse(#"{"id":1,"#) else {
            Issue.record("a broken object was read as a request")
            return
        }
        #expect(bad.message.hasPrefix("not JSON: "), "\(bad.message)")
        #expect(MachineProtocol.parse("   ") == nil)
        #expect(MachineProtocol.parse("# status") == nil)
    }
}
