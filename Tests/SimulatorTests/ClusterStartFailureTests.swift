import Foundation
import TestSupport
import Testing

@testable import Simulator

/// A cluster whose second node does not start stops the first: both processes are in the
/// report all the same. Node a's record was lost (it was stopped, never handed to the run).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ClusterStartFailureTests {
    @Test func aNodeThatDoesNotStartLeavesBothNodesInTheReport() async throws {
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests (make test does)")
        // Node b's port is taken (bound, not listening): its `serve` cannot listen there.
        let taken = try ClosedPort()
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary, cluster: true)
        let (failure, records) = try await runner.startRelay(ports: [0, taken.port])
        #expect(failure != nil, "node b started on a port taken")
        let relays = records.filter { $0.actor == "relay" }
        #expect(relays.map(\.node).contains("a"), "\(records)")
        #expect(relays.map(\.node).contains("b"), "\(records)")
        #expect(relays.allSatisfy { $0.termination != nil }, "\(records)")
        #expect(records.contains { $0.actor == "redis" }, "\(records)")
    }
}

extension ScenarioRunner {
    /// Starts the run's relay on `ports` as a run's first `start relay` step does; returns how
    /// it failed (nil: it started) and the processes the run's end reports.
    fileprivate func startRelay(ports: [Int]) async throws -> (failure: String?, records: [ChildProcessRecord]) {
        directory = NSTemporaryDirectory() + "watchrelay-sim-" + UUID().uuidString
        try RunDirectories.create(directory)
        relayPorts = ports
        var failure: String?
        do {
            try await startRelay()
        } catch {
            failure = "\(error)"
        }
        return (failure, await tearDown())
    }
}
