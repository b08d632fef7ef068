import Foundation
import Primitives
import Simulator
import TestSupport
import Testing

/// `Scenario.load(path:)` on what a shell hands `simulate` besides a regular file.
@Suite(.timeLimit(.minutes(1))) struct ScenarioFileReadTests {
    /// `simulate <(make-scenario)` and `/dev/stdin` are pipes: they were "cannot read /dev/fd/63".
    @Test func aScenarioFromAPipeLoads() throws {
        let pipe = Pipe()
        let json = #"{"name": "piped", "steps": [{"action": "start", "actor": "relay"}]}"#
        try pipe.fileHandleForWriting.write(contentsOf: Data(json.utf8))
        try pipe.fileHandleForWriting.close()
        let scenario = try Scenario.load(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        #expect(scenario.name == "piped" && scenario.steps.count == 1)
    }

    /// Why a path cannot be read, in the system's words (it was "cannot read" alone); and what
    /// is far larger than a scenario (a device that never ends) is refused once it is.
    @Test func whyAFileCannotBeReadIsSaid() throws {
        let directory = TemporaryDirectory()
        #expect(throws: ScenarioError.invalid("cannot read \(directory.path): Is a directory")) {
            try Scenario.load(path: directory.path)
        }
        #expect(throws: ScenarioError.invalid("cannot read \(directory.path("none.json")): No such file or directory")) {
            try Scenario.load(path: directory.path("none.json"))
        }
        #expect(throws: ScenarioError.invalid("/dev/zero: larger than 4 MiB, not a scenario")) {
            try Scenario.load(path: "/dev/zero")
        }
    }

    /// A suite reading scenarios from pipes whose writers have not written yet holds no
    /// cooperative-pool thread meanwhile: with one such file per pool thread (and two more),
    /// nothing else in the process ran until they were written.
    @Test func readingAScenarioFromAPipeHoldsNoPoolThread() async throws {
        let directory = TemporaryDirectory()
        let fifos = (0..<(ProcessInfo.processInfo.activeProcessorCount + 2)).map { directory.path("fifo-\($0)") }
        for fifo in fifos { #expect(mkfifo(fifo, 0o600) == 0) }
        let probeRan = LockedState(false)
        let ranBeforeWritten = LockedState<Bool?>(nil)
        // The writers, on a thread of their own: until the probe ran (10 s at most, times
        // WATCHRELAY_TIMEOUT_SCALE: a loaded machine's pool is slow, not stuck), then the files.
        let polls = Int(1000 * timeoutScale)
        let writer = Thread {
            for _ in 0..<polls where !probeRan.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
            ranBeforeWritten.withLock { $0 = probeRan.withLock { $0 } }
            for fifo in fifos {
                let json = #"{"name": "piped", "steps": [{"action": "sleep", "seconds": 0}]}"#
                if let handle = FileHandle(forWritingAtPath: fifo) {
                    handle.write(Data(json.utf8))
                    handle.closeFile()
                }
            }
        }
        writer.start()
        let runs = fifos.map { fifo in
            Task {
                var suite = ScenarioSuite()
                await suite.run(files: [fifo], runner: ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures))
                return suite.exitCode
            }
        }
        await Task.yield()
        _ = await Task { probeRan.withLock { $0 = true } }.value
        for run in runs { #expect(await run.value == ScenarioSuite.exitPassed) }
        #expect(ranBeforeWritten.withLock { $0 } == true, "a task ran while the pipes were read")
    }
}
