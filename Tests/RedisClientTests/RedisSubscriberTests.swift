import Primitives
import RedisClient
import TestSupport
import Testing

/// The pub/sub subscriber against a real `redis-server` on loopback.
@Suite(.timeLimit(.minutes(2)))
struct RedisSubscriberTests {
    /// What a subscriber reported, for the test to wait on.
    final class Recorder: Sendable {
        let events = LockedState<[RedisSubscriberEvent]>([])

        func record(_ event: RedisSubscriberEvent) { events.withLock { $0.append(event) } }

        var messages: [RedisSubscriberEvent] {
            events.withLock { $0.filter { if case .message = $0 { true } else { false } } }
        }

        func count(_ wanted: (RedisSubscriberEvent) -> Bool) -> Int { events.withLock { $0.filter(wanted).count } }

        var subscriptions: Int { count { $0 == .subscribed } }
        var outages: Int { count { if case .disconnected = $0 { true } else { false } } }
    }

    @Test func messagesOfEveryChannelArriveInPublishOrder() async throws {
        let redis = try await RedisServerProcess.start()
        let recorder = Recorder()
        let subscriber = RedisSubscriber(endpoint: redis.endpoint, channels: ["a", "b"]) { recorder.record($0) }
        try await eventually(10, "the subscription") { recorder.subscriptions == 1 }
        let client = RedisClient(endpoint: redis.endpoint)
        var commands: [RedisCommand] = []
        for n in 0..<200 { commands.append(RedisCommand("PUBLISH", n % 3 == 0 ? "b" : "a", "m\(n)")) }
        commands.append(RedisCommand(arguments: [Array("PUBLISH".utf8), Array("a".utf8), [0, 13, 10, 255]]))
        commands.append(RedisCommand("PUBLISH", "not-subscribed", "x"))
        _ = await client.execute(commands)
        try await eventually(10, "201 messages") { recorder.messages.count == 201 }
        var expected: [RedisSubscriberEvent] = (0..<200).map {
            .message(channel: $0 % 3 == 0 ? "b" : "a", payload: Array("m\($0)".utf8))
        }
        expected.append(.message(channel: "a", payload: [0, 13, 10, 255]))
        #expect(recorder.messages == expected)
        await subscriber.close()
        await client.close()
        await redis.stop()
    }

    @Test func redisDeathIsReportedOnceAndTheSubscriberSubscribesAgain() async throws {
        let redis = try await RedisServerProcess.start()
        let recorder = Recorder()
        let subscriber = RedisSubscriber(endpoint: redis.endpoint, channels: ["c"], retryMilliseconds: 50) {
            recorder.record($0)
        }
        try await eventually(10, "the subscription") { recorder.subscriptions == 1 }
        await redis.kill9()
        try await eventually(10, "the outage") { recorder.outages == 1 }
        // Several failed reconnects while redis is down are still one outage.
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.outages == 1)
        try await redis.restart()
        try await eventually(20, "the second subscription") { recorder.subscriptions == 2 }
        let client = RedisClient(endpoint: redis.endpoint)
        _ = await client.execute([RedisCommand("PUBLISH", "c", "after")])
        try await eventually(10, "the message after the restart") { recorder.messages.count == 1 }
        #expect(recorder.messages == [.message(channel: "c", payload: Array("after".utf8))])
        #expect(recorder.outages == 1)
        await subscriber.close()
        await client.close()
        await redis.stop()
    }

    @Test func closeEndsTheBlockingReadAndNothingIsReportedAfterIt() async throws {
        let redis = try await RedisServerProcess.start()
        let recorder = Recorder()
        let subscriber = RedisSubscriber(endpoint: redis.endpoint, channels: ["d"]) { recorder.record($0) }
        try await eventually(10, "the subscription") { recorder.subscriptions == 1 }
        await subscriber.close()
        let before = recorder.events.withLock { $0 }
        let client = RedisClient(endpoint: redis.endpoint)
        let receivers = await client.execute([RedisCommand("PUBLISH", "d", "late")])
        // PUBLISH answers how many subscribers got it: none once closed.
        #expect(try receivers[0].get() == .integer(0))
        #expect(recorder.events.withLock { $0 } == before)
        #expect(recorder.outages == 0)
        await client.close()
        await redis.stop()
    }

    @Test func anUnreachableServerIsReportedAndTheSubscriberKeepsTrying() async throws {
        let port = try ClosedPort().port
        let recorder = Recorder()
        let subscriber = RedisSubscriber(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: port), channels: ["e"], retryMilliseconds: 20
        ) { recorder.record($0) }
        try await eventually(10, "the outage") { recorder.outages == 1 }
        await subscriber.close()
        #expect(recorder.subscriptions == 0)
    }
}
