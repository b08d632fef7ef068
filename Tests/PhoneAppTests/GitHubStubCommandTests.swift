import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `watchrelay github-stub` as a real process.
@Suite(.timeLimit(.minutes(4)))
struct GitHubStubCommandTests {
    @Test func itPrintsItsURLServesTheFixturesAndStopsOnSIGTERM() async throws {
        let stub = try ChildProcess(
            ["--port", "0", "--fixtures", fixturesDirectory, "--rate-limit", "2", "--log-level", "error"],
            subcommand: "github-stub")
        defer { stub.terminate() }
        let base = try await stub.line(startingWith: "http://127.0.0.1:")
        let session = URLSession(configuration: .ephemeral)

        let (body, first) = try await session.data(from: try #require(URL(string: base + "/users/octocat")))
        #expect((first as? HTTPURLResponse)?.statusCode == 200)
        let user = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(user?["login"] as? String == "octocat")
        let (_, second) = try await session.data(from: try #require(URL(string: base + "/users/mattt/repos")))
        #expect((second as? HTTPURLResponse)?.statusCode == 200)
        let (_, limited) = try await session.data(from: try #require(URL(string: base + "/users/torvalds")))
        #expect((limited as? HTTPURLResponse)?.statusCode == 403, "--rate-limit 2 allows two requests per hour")
        #expect((limited as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-RateLimit-Remaining") == "0")

        stub.signal(SIGTERM)
        #expect(try await stub.exitStatus() == 0)
    }

    @Test func aMissingFixtureDirectoryIsAUsageError() async throws {
        let stub = try ChildProcess(["--port", "0", "--fixtures", "/nonexistent/fixtures"], subcommand: "github-stub")
        defer { stub.terminate() }
        #expect(try await stub.exitStatus() == 2)
    }
}
