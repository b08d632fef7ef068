import Foundation
import Testing

@testable import WidgetKit

/// App code that is `async`: its `WidgetCenter` calls count at the event's time, and a call
/// that comes after its event ended is kept, visibly, as an unscoped call.
@Suite struct AsyncAppEventTests {
    @Test func anAsyncAppActionIsHonouredAtItsEventsTime() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        host.at(hours: 9, "main actor") {
            await Task.yield()
            await MainActor.run {
                store.set(5)
                WidgetCenter.shared.reloadTimelines(ofKind: "counter")
            }
        }
        let day = await host.run()
        let shown = try day.expectShown(.accessoryRectangular, within: 1, of: host.date(hours: 9)) { $0.count == 5 }
        #expect(shown.from == host.date(hours: 9, seconds: 0.1))
        #expect(day.appEvents.map(\.reloadCalls) == [["counter"]])
        #expect(day.appEvents.map(\.at) == [host.date(hours: 9)])
        #expect(day.appEvents.allSatisfy { !$0.isUnscoped })
    }

    @Test func anActionAwaitingATaskThatReloadsIsHonouredAtItsEventsTime() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        host.every(3600, from: host.date(hours: 8), until: host.date(hours: 11), "sync") { n in
            let task = Task {
                store.set(10 + n)
                WidgetCenter.shared.reloadTimelines(ofKind: "counter")
            }
            await task.value
        }
        let day = await host.run()
        for n in 0..<3 {
            try day.expectShown(.accessoryRectangular, within: 1, of: host.date(hours: 8 + Double(n))) {
                $0.count == 10 + n
            }
        }
        #expect(day.reloads.dropFirst().map(\.at) == [8.0, 9, 10].map { host.date(hours: $0, seconds: 0.1) })
        #expect(day.appEvents.map(\.reloadCalls) == [["counter"], ["counter"], ["counter"]])
    }

    @Test func aCallFromATaskTheEventDidNotAwaitIsRecordedAsUnscoped() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        host.at(hours: 9, "fire and forget") {
            Task {
                for await _ in gate { break }
                store.set(7)
                WidgetCenter.shared.reloadTimelines(ofKind: "counter")
                finished.yield()
            }
        }
        host.at(hours: 10, "later event") {
            open.yield()
            for await _ in done { break }
        }
        let day = await host.run()
        // Nine's call came while ten's event ran, through nine's ended scope: not ten's call.
        #expect(day.appEvents.map(\.label) == ["fire and forget", "later event", WidgetHost<CountEntry>.unscopedLabel])
        #expect(day.appEvents.map(\.reloadCalls) == [[], [], ["counter"]])
        #expect(day.appEvents.last?.isUnscoped == true)
        #expect(day.appEvents.last?.at == host.date(hours: 10))
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 10, seconds: 1))?.entry.count == 7)
    }
}
