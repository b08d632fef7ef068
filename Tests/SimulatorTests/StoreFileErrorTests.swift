import Foundation
import Simulator
import TestSupport
import Testing

/// `watchrelay serve --db`, `phone` and `watch` on a file they cannot use: exit 1, and one
/// line on stderr that names the file, what is wrong and what to do.
@Suite struct StoreFileErrorTests {
    let directory = TemporaryDirectory()

    @Test func serveOnAGarbageFileSaysItIsNotAWatchRelayDatabase() async throws {
        let db = directory.path("relay.db")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: db))

        let (status, stderr) = try await runToExit(["serve", "--port", "0", "--db", db])
        #expect(status == 1)
        #expect(stderr.contains("\(db): not a WatchRelay database: move it away or pass another --db"))
    }

    @Test func serveOnADamagedFileSaysRestoreOrRemove() async throws {
        let db = directory.path("relay.db")
        try await makeRelayDatabase(db)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: db))
        try handle.seek(toOffset: 100)  // page 1's b-tree (the schema), after the file header
        try handle.write(contentsOf: Data((0..<3996).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xA5) }))
        try handle.close()
        // The relay may have exited with its last pages still in the write-ahead log (WAL mode),
        // where a reader would find an intact page 1: without the log, the damaged page is read.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }

        let (status, stderr) = try await runToExit(["serve", "--port", "0", "--db", db, "--exit-on-stdin-eof"])
        #expect(status == 1)
        #expect(
            stderr.contains("\(db): damaged after a crash: restore from backup or remove it (its queued items are lost)"))
    }

    @Test func serveInAReadOnlyDirectorySaysCheckItsPermissions() async throws {
        let dir = directory.path("locked")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir) }

        let (status, stderr) = try await runToExit(["serve", "--port", "0", "--db", dir + "/relay.db"], withoutOverride: true)
        #expect(status == 1)
        #expect(stderr.contains("\(dir)/relay.db: read-only: check permissions of \(dir)"))
    }

    @Test func serveOnAReadOnlyFileSaysCheckPermissions() async throws {
        let db = directory.path("relay.db")
        try await makeRelayDatabase(db)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db)

        let (status, stderr) = try await runToExit(["serve", "--port", "0", "--db", db], withoutOverride: true)
        #expect(status == 1)
        #expect(stderr.contains("\(db): read-only: check permissions of \(directory.path)"))
    }

    @Test func phoneOnAGarbageFileSaysItIsNotAWatchRelayDatabase() async throws {
        let state = directory.path("phone-state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: state + "/phone.db"))

        let (status, stderr) = try await runToExit(["phone", "list", "--state", state])
        #expect(status == 1)
        #expect(stderr.contains("\(state)/phone.db: not a WatchRelay database: move it away or pass another --state"))
    }

    /// A misspelt --state used to become a new, empty state: `list` answered "(no favorites)".
    /// Only `add` may make one (favorites chosen before the phone's first run).
    @Test func phoneSubcommandsOtherThanAddDoNotMakeAStateDirectory() async throws {
        let state = directory.path("typo")
        for words in [["list"], ["remove", "octocat"], ["move", "octocat", "0"], ["refresh"]] {
            let (status, stderr) = try await runToExit(["phone"] + words + ["--state", state])
            #expect(status == 1, "\(words)")
            #expect(stderr.contains("\(words[0]): no phone state in '\(state)' (no phone.db)"), "\(stderr)")
            #expect(!FileManager.default.fileExists(atPath: state), "\(words) made the directory")
        }
        #expect(try await runToExit(["phone", "add", "octocat", "--state", state]).0 == 0)
        #expect(try await runToExit(["phone", "list", "--state", state]).0 == 0)
    }

    @Test func watchOnAGarbageFileSaysItIsNotAWatchRelayDatabase() async throws {
        let state = directory.path("watch-state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: state + "/watch.db"))
        let closed = try ClosedPort()

        let (status, stderr) = try await runToExit([
            "watch", "--relay", "ws://127.0.0.1:\(closed.port)/v1", "--state", state, "--once", "--wait-s", "1",
        ])
        #expect(status == 1)
        #expect(stderr.contains("\(state)/watch.db: not a WatchRelay database: move it away or pass another --state"))
    }

    /// A real relay database at `path`: the relay creates it, then stops at the end of its
    /// (empty) standard input.
    private func makeRelayDatabase(_ path: String) async throws {
        let (status, stderr) = try await runToExit(["serve", "--port", "0", "--db", path, "--exit-on-stdin-eof"])
        guard status == 0 else { throw TestFailure("the relay could not make \(path): \(stderr)") }
    }

    /// Runs `watchrelay arguments` until it exits; its exit status and standard error. With
    /// `withoutOverride`, a root test run drops the capabilities that let root write anything
    /// (so file permissions apply to it as to any user). Started with `posix_spawn` (as the
    /// simulator's children): concurrent `Process.run()` calls crashed a loaded test run.
    private func runToExit(_ arguments: [String], withoutOverride: Bool = false) async throws -> (Int32, String) {
        let errPath = directory.path("stderr-\(UUID().uuidString).txt")
        var executable = watchrelayBinary
        var argv = arguments
        if withoutOverride && geteuid() == 0 {
            executable = "/usr/bin/setpriv"
            argv = ["--bounding-set", "-dac_override,-dac_read_search", watchrelayBinary] + arguments
        }
        let spawned = spawnChild(executable, argv) { files in
            posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&files, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let child = SpawnedProcess(pid: try spawned.get())
        try await eventually(60, "watchrelay \(arguments[0]) to exit") { !child.isRunning }
        let termination = child.termination ?? ""
        guard termination.hasPrefix("exit status "), let status = Int32(termination.dropFirst("exit status ".count)) else {
            throw TestFailure("watchrelay \(arguments[0]) ended: \(termination)")
        }
        return (status, (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
