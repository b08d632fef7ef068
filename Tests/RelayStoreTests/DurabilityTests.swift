#if os(Linux)
    import Foundation
    import Glibc
    import RelayCore
    import RelayProtocol
    import TestSupport
    import Testing

    @testable import RelayStore

    /// `kill -9` at any moment loses nothing whose commit returned.
    ///
    /// The child is this test bundle run again with ``KillChild/databaseVariable`` set and a
    /// filter that selects ``KillChild/commitsBatchesUntilKilled()``: it commits batch after batch
    /// and prints `committed N` after each commit returns. The parent kills it with SIGKILL in
    /// mid-stream and checks that every batch the child reported is on disk, whole.
    struct DurabilityTests {
        @Test(.enabled(if: !KillChild.isChild), .timeLimit(.minutes(5)))
        func everyReportedCommitSurvivesKill9() async throws {
            let directory = TemporaryDirectory()
            let path = directory.path("relay.sqlite")
            try await RelayStore(path: path).commit([.insertPair(Fixture.pair(KillChild.pair.rawValue))])

            // Several rounds: each child resumes after the batches it finds, so recovery of a
            // killed writer's log is itself tested under the next kill.
            var verified = 0
            for _ in 1...4 {
                let reported = try await runChildAndKill(path: path, atLeast: verified + 15)
                try #require(reported >= verified + 15, "the child reported only \(reported) commits")

                let loaded = try snapshot(KillChild.pair.rawValue, in: await reload(path))
                let stored = sendIDs(loaded, .phone)
                let batches = stored.count / KillChild.batchSize
                #expect(stored.count % KillChild.batchSize == 0, "a batch was stored in part")
                #expect(batches >= reported, "reported \(reported) commits, found \(batches)")
                #expect(stored == (0..<batches).flatMap { KillChild.sendIDs(batch: $0 + 1) })
                #expect(loaded.directions[.phone]?.seqReserved == Int64(batches))
                verified = batches
            }
        }

        /// Runs the child until it reports commit `atLeast`, kills it with SIGKILL a moment later,
        /// and returns the last commit it reported.
        private func runChildAndKill(path: String, atLeast target: Int) async throws -> Int {
            let child = TestProcess()
            child.executableURL = URL(
                fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            child.arguments = ["--testing-library", "swift-testing", "--filter", "KillChild"]
            child.environment = ProcessInfo.processInfo.environment.merging([
                KillChild.databaseVariable: path, KillChild.parentVariable: String(getpid()),
            ]) { $1 }
            let output = Pipe()
            child.standardOutput = output
            child.standardError = FileHandle.nullDevice
            try child.run()

            let lines = ChildOutput(reading: output.fileHandleForReading)
            var reported = 0
            /// Takes the `committed N` lines read so far into `reported`.
            func takeReports() {
                for line in lines.takeAll() where line.hasPrefix("committed ") {
                    if let n = Int(line.dropFirst("committed ".count)) { reported = max(reported, n) }
                }
            }
            let deadline = ContinuousClock.now + .seconds(20 * timeoutScale)
            while reported < target, !lines.isClosed, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
                takeReports()
            }
            // Kill at an arbitrary point, usually inside a later commit, not right after a report.
            try await Task.sleep(for: .microseconds(Int.random(in: 0...5000)))
            kill(child.processIdentifier, SIGKILL)
            await waitForExit(child)
            try? await eventually(1, "the end of the child's output") { lines.isClosed }  // lines written before the kill
            takeReports()
            #expect(child.terminationReason == .uncaughtSignal)
            return reported
        }
    }

    /// The child side of ``DurabilityTests``; enabled only in the re-executed test bundle.
    struct KillChild {
        static let databaseVariable = "RELAY_STORE_KILL_CHILD_DB"
        /// The parent's pid: the child stops once its parent is gone (a parent whose test hit its
        /// time limit, or was killed, must not leave a writer running for minutes).
        static let parentVariable = "RELAY_STORE_KILL_CHILD_PARENT"
        static let pair = PairID("durable")
        static let batchSize = 10
        static var isChild: Bool { ProcessInfo.processInfo.environment[databaseVariable] != nil }

        static func sendIDs(batch: Int) -> [String] { (0..<batchSize).map { "b\(batch)-\($0)" } }

        @Test(.enabled(if: KillChild.isChild))
        func commitsBatchesUntilKilled() async throws {
            let path = try #require(ProcessInfo.processInfo.environment[Self.databaseVariable])
            let store = try RelayStore(path: path, synchronous: .full)
            let loaded = try await store.load(now: Fixture.now)
            let first = (loaded.first?.directions[.phone]?.items.count ?? 0) / Self.batchSize + 1
            let parent = ProcessInfo.processInfo.environment[Self.parentVariable].flatMap { pid_t($0) }
            // Bounded too, so a child run by hand stops by itself.
            for batch in first..<(first + 20_000) {
                if let parent, getppid() != parent { return }
                var mutations = Self.sendIDs(batch: batch).map {
                    StoreMutation.insertItem(Self.pair, direction: .phone, Fixture.item($0))
                }
                mutations.append(.setSeqReserved(Self.pair, direction: .phone, Int64(batch)))
                // Every other batch as one nobody waits on (no fsync of its own): kill -9 must
                // not lose those either.
                try await store.commit(mutations, urgent: batch % 2 == 0)
                let line = Array("committed \(batch)\n".utf8)
                // One write(2) per line: a pipe write this small is atomic, and nothing is buffered.
                _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            }
        }
    }
#endif
