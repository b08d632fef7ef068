import Foundation
import PhoneApp
import RelayProtocol
import Testing

/// How long a change takes to reach the watch, over loopback (printed, never asserted: timing
/// assertions are flaky on a shared machine; the benchmarks measure).
@Suite(.timeLimit(.minutes(5)))
struct PhoneLatencyTests {
    @Test func everyChangeReachesTheWatchAsItsOwnSnapshot() async throws {
        let h = try await PhoneHarness.start()
        let logins = Array(h.github.server.catalog.logins.prefix(20))
        var addReturned: [Duration] = []
        var addAtWatch: [Duration] = []
        var removeAtWatch: [Duration] = []
        for login in logins {
            let start = ContinuousClock.now
            let change = try await h.phone.add(login)
            addReturned.append(ContinuousClock.now - start)
            let snapshot = try await h.watch.nextSnapshot()
            addAtWatch.append(ContinuousClock.now - start)
            #expect(snapshot.users.last?.login == login)
            #expect(change.sync == .pushed(revision: snapshot.revision))
        }
        for login in logins {
            let start = ContinuousClock.now
            _ = try await h.phone.remove(login)
            let snapshot = try await h.watch.nextSnapshot()
            removeAtWatch.append(ContinuousClock.now - start)
            #expect(!snapshot.users.contains { $0.login == login })
        }
        let report = [
            ("add returned (GitHub fetch + commit + relay accepted)", addReturned),
            ("add → snapshot at the watch", addAtWatch),
            ("remove → snapshot at the watch", removeAtWatch),
        ]
        for (what, samples) in report {
            print("latency \(what): median \(Self.ms(Self.percentile(samples, 0.5))) ms, p90 \(Self.ms(Self.percentile(samples, 0.9))) ms, n=\(samples.count)")
        }
        await h.stop()
    }

    static func percentile(_ samples: [Duration], _ p: Double) -> Duration {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func ms(_ d: Duration) -> String {
        String(format: "%.2f", Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
    }
}
