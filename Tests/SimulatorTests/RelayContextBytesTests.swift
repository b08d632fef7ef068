import Foundation
import RelayClient
import RelayProtocol
import TestSupport
import Testing

@testable import Simulator

/// A scenario's `contextBytes` reaches every relay the runner starts over sockets: the relay in
/// this process, `serve --context-bytes` as a child, and both nodes of a cluster: the leader's
/// core welcomes the devices of both (a phone on one, a watch on the other), and the other node,
/// which leads once the first is gone (after a restart, either may), has it too. Read from the
/// `welcome` a new device gets.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RelayContextBytesTests {
    @Test(arguments: [false, true])
    func aRelayAnnouncesTheContextBytesItWasStartedWith(children: Bool) async throws {
        let directory = TemporaryDirectory()
        let executable = try Self.executable(children)
        let relay: any ScenarioRelay =
            if let executable {
                try await RelayChildProcess.start(
                    executable: executable, port: 0, database: directory.path("relay.db"), contextBytes: 600)
            } else {
                try await InProcessRelay.start(port: 0, database: directory.path("relay.db"), contextBytes: 600)
            }
        let announced = await Self.result { try await Self.announcedContextBytes(relay.url, directory) }
        await relay.stop()
        #expect(try announced.get() == 600)
    }

    @Test(arguments: [false, true])
    func bothNodesOfAClusterAnnounceIt(children: Bool) async throws {
        let directory = TemporaryDirectory()
        let executable = try Self.executable(children)
        let redis = try await RedisChildProcess.start(directory: directory.path)
        let cluster = try await ClusterScenarioRelay.start(
            redisURL: redis.url, ports: [], database: directory.path("relay.db"), consoleToken: "t", contextBytes: 600,
            executable: executable)
        let announced = await Self.result {
            let both = [
                try await Self.announcedContextBytes(cluster.url, directory),
                try await Self.announcedContextBytes(cluster.watchURL, directory),
            ]
            // Node a goes: b takes the lease and welcomes with its own settings.
            await cluster.nodes[0].stop()
            return both + [try await Self.announcedContextBytes(cluster.watchURL, directory)]
        }
        await cluster.stop()
        await redis.stop()
        #expect(try announced.get() == [600, 600, 600], "a leading (through a, through b), then b leading")
    }

    /// `watchrelay` for `children`, nil for the relay in this process.
    static func executable(_ children: Bool) throws -> String? {
        guard children else { return nil }
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests (make test does)")
        return binary
    }

    /// What `body` returned or threw, so that the relays stop either way before the test ends.
    static func result<T: Sendable>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// The `contextBytes` of the `welcome` a new device gets from the relay at `url`.
    static func announcedContextBytes(_ url: String, _ directory: TemporaryDirectory) async throws -> Int {
        let state = directory.path("device-" + UUID().uuidString)
        let session = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: url, role: .watch, deviceName: "probe", stateDirectory: state, requestTimeoutSeconds: 10 * timeoutScale))
        try await session.activate()
        let limits = await session.limits
        await session.close()
        return limits.contextBytes
    }
}
