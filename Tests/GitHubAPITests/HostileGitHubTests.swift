import Foundation
import Glibc
import Primitives
import TestSupport
import Testing

@testable import GitHubAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A GitHub that misbehaves at the HTTP level (the black-box probe of the phone): its answers are
/// bounded in size and time, and a redirect to another origin is not followed with the token.
@Suite(.timeLimit(.minutes(2)))
struct HostileGitHubTests {
    /// A user call to `server` fails as an answer over the 16 MiB limit.
    static func expectTooLarge(_ server: ScriptedHTTPServer) async throws {
        let client = GitHubRESTClient(baseURL: server.url)
        await #expect(throws: GitHubError.unavailable("127.0.0.1:\(server.port): answer larger than \(16 << 20) bytes")) {
            try await client.user("octocat")
        }
        server.stop()
    }

    @Test func aBodyThatGrowsPastTheLimitEndsTheCallWithoutBeingKept() async throws {
        // Chunked (no Content-Length), 17 MiB: past the 16 MiB limit before its end. Kept small:
        // the client reads a transfer it gave up on to its end (it never cancels one).
        let server = try ScriptedHTTPServer { _, send in
            _ = send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = String(repeating: "x", count: 65536)
            for _ in 0..<272 where send(String(65536, radix: 16) + "\r\n" + chunk + "\r\n") {}
            _ = send("0\r\n\r\n")
        }
        try await Self.expectTooLarge(server)
    }

    @Test func aContentLengthPastTheLimitIsRefusedAtTheResponse() async throws {
        let server = try ScriptedHTTPServer { _, send in
            _ = send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n{")
        }
        try await Self.expectTooLarge(server)
    }

    @Test func aBodySentAByteAtATimeEndsAtTheDeadline() async throws {
        // Never silent for the 10 s inactivity timeout, so only the 1 s deadline can end it; the
        // server goes on until the test stops it (the transfer the client left runs until then).
        let server = try ScriptedHTTPServer { _, send in
            guard send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n") else { return }
            for _ in 0..<1000 {
                guard send("{") else { return }
                usleep(100_000)
            }
        }
        let client = GitHubRESTClient(baseURL: server.url, answerDeadline: .seconds(1))
        await #expect(throws: GitHubError.unavailable("127.0.0.1:\(server.port): answer took longer than 1 s")) {
            try await client.user("octocat")
        }
        server.stop()
    }

    @Test func callsAreRefusedAtOnceWhileAnswersCutShortStillHoldTheConnections() async throws {
        // Transfers cut short run on (the client never cancels one) and hold connections: six
        // made every later call wait behind them until its own deadline (a review found it).
        let server = try ScriptedHTTPServer { head, send in
            if head.contains("/users/slow") {
                // Until the test ends the answers begun so far (on a loaded machine a deadline can
                // fire late, so an answer must not end by itself first).
                guard send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n") else { return }
                for _ in 0..<1000 {
                    guard send(" ") else { return }
                    usleep(100_000)
                }
            } else {
                _ = send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(Self.octocat.utf8.count)\r\n\r\n" + Self.octocat)
            }
        }
        let client = GitHubRESTClient(baseURL: server.url, answerDeadline: .seconds(1))
        #expect(try await client.user("octocat").login == "octocat")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try? await client.user("slow") } }
        }
        let asked = server.requests.count
        do {
            _ = try await client.user("octocat")
            Issue.record("a call was made while six answers cut short were still arriving")
        } catch {
            #expect(error == .unavailable("127.0.0.1:\(server.port): not asked: 6 answers cut short earlier (too large or too slow) are still arriving"))
        }
        #expect(server.requests.count == asked)
        // When those answers end (the server breaks them off), calls are made again.
        server.endAnswersBegunSoFar()
        try await eventually(30, "a call made again") { (try? await client.user("octocat"))?.login == "octocat" }
        server.stop()
    }

    static let octocat =
        #"{"login":"octocat","id":1,"name":"The Octocat","avatar_url":"https://a.example/b","html_url":"https://github.com/octocat","public_repos":1,"followers":1,"following":1}"#

    @Test func aRedirectToAnotherOriginIsNotFollowedWithTheToken() async throws {
        let elsewhere = try ScriptedHTTPServer { _, send in
            _ = send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        }
        let server = try ScriptedHTTPServer { _, send in
            _ = send("HTTP/1.1 302 Found\r\nLocation: \(elsewhere.url.absoluteString)/users/octocat\r\nContent-Length: 0\r\n\r\n")
        }
        let client = GitHubRESTClient(baseURL: server.url, token: "ghp_secret")
        await #expect(throws: GitHubError.self) { try await client.user("octocat") }
        #expect(elsewhere.requests.isEmpty, "the other origin got \(elsewhere.requests)")
        #expect(server.requests.first?.contains("Authorization: Bearer ghp_secret") == true)
        server.stop()
        elsewhere.stop()
    }
}

/// An HTTP/1.1 server on 127.0.0.1 that answers every request by running `respond` on a thread
/// of its own with the request's head and a `send` that writes text (false once the client is
/// gone, or the answer was ended by ``endAnswersBegunSoFar()`` or ``stop()``), then closes the
/// connection: for answers no real server would give.
final class ScriptedHTTPServer: Sendable {
    let port: Int
    private let listener: Int32
    private let heads = LockedState<[String]>([])
    /// Answers begun in an earlier generation than this one are ended.
    private let generation = LockedState(0)

    /// The heads of the requests received so far.
    var requests: [String] { heads.withLock { $0 } }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(respond: @escaping @Sendable (_ head: String, _ send: (String) -> Bool) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let (heads, generation) = (heads, generation)
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                let born = generation.withLock { $0 }
                Thread.detachNewThread {
                    var head = [UInt8]()
                    var byte: UInt8 = 0
                    while !head.ends(with: Array("\r\n\r\n".utf8)), recv(connection, &byte, 1, 0) == 1 { head.append(byte) }
                    heads.withLock { $0.append(String(decoding: head, as: UTF8.self)) }
                    respond(String(decoding: head, as: UTF8.self)) { text in
                        guard generation.withLock({ $0 }) == born else { return false }
                        let bytes = Array(text.utf8)
                        var sent = 0
                        while sent < bytes.count {
                            let n = bytes[sent...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                            if n <= 0 { return false }
                            sent += n
                        }
                        return true
                    }
                    close(connection)
                }
            }
        }
    }

    /// Ends the answers being sent: their next `send` is false.
    func endAnswersBegunSoFar() {
        generation.withLock { $0 += 1 }
    }

    /// Stops accepting and ends the answers being sent.
    func stop() {
        endAnswersBegunSoFar()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
