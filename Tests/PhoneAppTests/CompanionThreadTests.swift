import Foundation
@testable import PhoneApp
import Primitives
import SQLite
import TestSupport
import Testing

/// The companion runs on a thread of its own, not on the cooperative pool: its store's writes
/// wait out another process's lock (`phone add --state DIR` while it runs), up to SQLite's busy
/// timeout, and a pool thread parked there is one of two on a two-core machine.
@Suite(.timeLimit(.minutes(2)))
struct CompanionThreadTests {
    @Test func theCompanionsCodeRunsOnItsOwnThread() async throws {
        let dir = TemporaryDirectory()
        let github = try TestGitHub.start()
        let phone = try PhoneCompanion(configuration: phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path), github: github.client)
        #expect(await phone.runsOnItsOwnThread())
        await phone.shutdown()
        await github.stop()
    }

    /// More companions than the pool has threads, each adding a favorite while another
    /// connection holds its file's write lock: the pool still runs a task, and the locks are let
    /// go only after it did. Each add then goes through. On the pool, the adds parked every pool
    /// thread until SQLite's busy timeout (5 s) ended them with `database is locked`.
    @Test func addsWaitingForAnotherWritersLockParkNoPoolThread() async throws {
        let github = try TestGitHub.start()
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        var phones: [PhoneCompanion] = []
        var locks: [SQLiteDatabase] = []
        var dirs: [TemporaryDirectory] = []
        for _ in 0..<count {
            let dir = TemporaryDirectory()
            dirs.append(dir)
            phones.append(try PhoneCompanion(configuration: phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path), github: github.client))
            let lock = try SQLiteDatabase(path: dir.path + "/" + PhoneStore.fileName)
            try lock.execute("BEGIN IMMEDIATE")
            locks.append(lock)
        }
        let adds = phones.map { phone in Task { try await phone.add("octocat").listChanged } }
        await Task.detached {}.value
        for lock in locks { try lock.execute("COMMIT") }
        for add in adds { #expect(try await add.value) }
        for phone in phones { await phone.shutdown() }
        await github.stop()
    }

    /// The executor's thread carries its name, as `top -H` and `gdb` show it (Foundation on
    /// Linux dropped the name set before `start()`: the thread had the test process's name),
    /// and ends once its actor and executor are gone.
    @Test func theExecutorsThreadIsNamedAndEndsWithItsActor() async throws {
        let name = "te-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var actor: OnAThreadOfItsOwn? = OnAThreadOfItsOwn(name: name)
        #expect(await actor?.threadName() == name)
        #expect(Self.threads(named: name) == 1)
        actor = nil
        try await eventually(10, "the executor's thread to end") { Self.threads(named: name) == 0 }
    }

    /// How many threads of this process are named `name` (/proc/self/task/*/comm).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
        }.count
    }
}

/// An actor on a ``ThreadExecutor`` of its own.
private actor OnAThreadOfItsOwn {
    nonisolated let executor: ThreadExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(name: String) {
        executor = ThreadExecutor(name: name)
    }

    /// The name of the thread this runs on, as the kernel has it.
    func threadName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }
}
