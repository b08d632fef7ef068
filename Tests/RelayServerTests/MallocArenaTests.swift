import Foundation
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// `watchrelay serve` runs on one malloc arena (RelayCommand's `MallocArenas`): glibc's extra
/// arenas, one per thread that met a held lock, each kept pages of its own resident. Not under
/// ThreadSanitizer, whose allocator replaces glibc's.
@Suite(.disabled(if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil, "TSan's allocator has no arenas"))
struct MallocArenaTests {
    @Test func theRelayProcessAllocatesFromOneArena() async throws {
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let relay = try await RelayProcess.start(db: dir.path + "/relay.db")
        defer { relay.terminate() }
        // Threads at work: the service thread, the store's writer, the runtime's.
        let (phone, watch, _, _) = try await pairDevices(url: relay.url, clients: clients)
        for n in 0..<50 {
            phone.send(.send(Send(id: "u-\(n)", mode: .userInfo, payload: Payload(kind: "t", ["n": .int(Int64(n))]))))
        }
        for _ in 0..<50 { _ = try await phone.next() }
        _ = try await watch.next()

        // A glibc arena other than the main one is a 64 MiB reservation: its used part, then the
        // rest without access (`---p`, no file).
        let maps = try String(contentsOfFile: "/proc/\(relay.process.processIdentifier)/maps", encoding: .utf8)
        let arenaTails = maps.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, fields[1] == "---p" else { return false }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            return bounds.count == 2 && bounds[1] - bounds[0] >= 16 << 20
        }
        #expect(arenaTails.isEmpty, "arenas besides the main one: \(arenaTails)")
    }
}
