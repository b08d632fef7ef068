import Foundation
import RedisClient
import TestSupport
import Testing

/// The hiredis client against a real `redis-server` on loopback.
@Suite(.timeLimit(.minutes(2)))
struct RedisClientTests {
    @Test func pipelineAnswersEachCommandInOrder() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let results = await client.execute([
            RedisCommand("SET", "k", "v"), RedisCommand("INCR", "n"), RedisCommand("INCR", "n"),
            RedisCommand("GET", "k"), RedisCommand("GET", "missing"), RedisCommand("RPUSH", "l", "a", "b"),
            RedisCommand("LRANGE", "l", "0", "-1"),
        ])
        #expect(try results.map { try $0.get() } == [
            .status("OK"), .integer(1), .integer(2), .bulk(Array("v".utf8)), .null, .integer(2),
            .array([.bulk([97]), .bulk([98])]),
        ])
        await client.close()
        await redis.stop()
    }

    @Test func bytesAreBinarySafe() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let bytes: [UInt8] = [0, 13, 10, 255, 36, 42]
        let results = await client.execute([
            RedisCommand(arguments: [Array("SET".utf8), [0, 1], bytes]), RedisCommand(arguments: [Array("GET".utf8), [0, 1]]),
            RedisCommand("SET", "empty", ""), RedisCommand("GET", "empty"),
        ])
        #expect(try results[1].get() == .bulk(bytes))
        #expect(try results[3].get() == .bulk([]))
        await client.close()
        await redis.stop()
    }

    @Test func errorRepliesAndScriptErrorsAreValuesAndTheConnectionGoesOn() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let results = await client.execute([
            RedisCommand("NOSUCHCOMMAND"), RedisCommand("EVAL", "return redis.error_reply('boom')", "0"),
            RedisCommand("EVAL", "this is not lua", "0"), RedisCommand("EVAL", "return {1, 'two', {3}}", "0"),
        ])
        guard case .failure(.errorReply(let unknown)) = results[0] else { throw TestFailure("\(results[0])") }
        #expect(unknown.contains("unknown command"))
        guard case .failure(.errorReply(let boom)) = results[1] else { throw TestFailure("\(results[1])") }
        #expect(boom.hasSuffix("boom"))
        guard case .failure(let compile) = results[2] else { throw TestFailure("\(results[2])") }
        #expect(compile.isScriptError)
        #expect(try results[3].get() == .array([.integer(1), .bulk(Array("two".utf8)), .array([.integer(3)])]))
        await client.close()
        await redis.stop()
    }

    @Test func concurrentCallersShareTheConnection() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let total = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let results = await client.execute((0..<50).map { _ in RedisCommand("INCR", "counter") })
                    return results.filter { (try? $0.get()) != nil }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(total == 1000)
        #expect(try await client.execute([RedisCommand("GET", "counter")])[0].get().integer == 1000)
        await client.close()
        await redis.stop()
    }

    @Test func unreachableServerIsAnErrorValueAndTheClientRecoversWhenItIsBack() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint, timeoutMilliseconds: 1000)
        #expect(try await client.execute([RedisCommand("SET", "kept", "1")])[0].get() == .status("OK"))
        await redis.kill9()
        let down = await client.execute([RedisCommand("GET", "kept")])
        guard case .failure(.unreachable) = down[0] else { throw TestFailure("expected unreachable, got \(down)") }
        try await redis.restart()
        // The append-only file (fsync always) brought the key back; the client reconnected itself.
        #expect(try await client.execute([RedisCommand("GET", "kept")])[0].get() == .bulk([49]))
        await client.close()
        await redis.stop()
    }

    @Test func aHaltingClientSendsNothingAfterAFailureUntilResumed() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint, haltsAfterFailure: true)
        let admin = RedisClient(endpoint: redis.endpoint)
        #expect(try await client.execute([RedisCommand("RPUSH", "l", "1")])[0].get() == .integer(1))
        _ = await admin.execute([RedisCommand("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")])
        guard case .failure = await client.execute([RedisCommand("RPUSH", "l", "2")])[0] else {
            throw TestFailure("the killed connection must fail")
        }
        // Queued before the resume: not sent on a new connection (it would follow a hole).
        guard case .failure(.unreachable) = await client.execute([RedisCommand("RPUSH", "l", "3")])[0] else {
            throw TestFailure("a halted client must not send")
        }
        client.resumeAfterFailure()
        #expect(try await client.execute([RedisCommand("RPUSH", "l", "4")])[0].get() == .integer(2))
        #expect(try await admin.execute([RedisCommand("LRANGE", "l", "0", "-1")])[0].get() == .array([.bulk([49]), .bulk([52])]))
        await client.close()
        await admin.close()
        await redis.stop()
    }

    /// A caller with a deadline (a cluster leader renewing its lease) gets its answer by then
    /// from a server that takes the request and never replies, whatever the socket's timeout
    /// (ten minutes here); then the next request still works on a new connection.
    @Test func aBlockingCallWithADeadlineGivesUpOnAServerThatNeverAnswers() async throws {
        let silent = try SilentPort()
        let client = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: silent.port), timeoutMilliseconds: 600_000)
        let results = try await withTimeout(30 * timeoutScale, "the call to give up at its deadline") {
            await withCheckedContinuation { (done: CheckedContinuation<[Result<RedisValue, RedisError>], Never>) in
                // A thread of the caller's own, as the lease thread is: this one blocks.
                Thread { done.resume(returning: client.executeBlocking([RedisCommand("PING")], until: .now + .milliseconds(100))) }
                    .start()
            }
        }
        guard case .failure(.unreachable(let reason)) = results[0] else { throw TestFailure("expected unreachable, got \(results)") }
        #expect(reason.contains("no reply in time"), "\(reason)")
        #expect(silent.hasConnection, "the request was sent")
        // The client's thread still waits on the silent server; it ends with the client.
        _ = client
    }

    @Test func closedClientAnswersUnreachable() async throws {
        let port = try ClosedPort()
        let client = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: port.port))
        guard case .failure(.unreachable) = await client.execute([RedisCommand("PING")])[0] else {
            throw TestFailure("a refused connection must be unreachable")
        }
        await client.close()
        guard case .failure(.unreachable) = await client.execute([RedisCommand("PING")])[0] else {
            throw TestFailure("a closed client must answer unreachable")
        }
    }

    @Test(arguments: [
        ("redis://10.0.0.5:6380/2", RedisEndpoint(host: "10.0.0.5", port: 6380, database: 2)),
        ("redis://localhost", RedisEndpoint(host: "localhost", port: 6379, database: 0)),
        ("redis://h:1/", RedisEndpoint(host: "h", port: 1, database: 0)),
    ])
    func endpointParsesTheURL(url: String, expected: RedisEndpoint) throws {
        #expect(try RedisEndpoint(url: url) == expected)
    }

    @Test(arguments: ["http://h:1", "redis://", "redis://h:0", "redis://h:x", "redis://h:1/-1", "redis://u:p@h:1"])
    func endpointRejectsBadURLs(url: String) {
        #expect(throws: RedisEndpointError.self) { try RedisEndpoint(url: url) }
    }
}
