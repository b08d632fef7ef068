import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing

@testable import RelayStore

// MARK: - Fixtures

/// The records and items of the Redis store's tests too (``StoreFixture``).
typealias Fixture = StoreFixture

// MARK: - Helpers

/// Opens a new ``RelayStore`` on `path` (a restart) and loads it.
func reload(_ path: String, now: Timestamp = Fixture.now) async throws -> [PairSnapshot] {
    let store = try RelayStore(path: path)
    return try await store.load(now: now)
}

/// The snapshot of `pair` in `snapshots`, failing the test if it is missing.
func snapshot(
    _ pair: String, in snapshots: [PairSnapshot], sourceLocation: SourceLocation = #_sourceLocation
) throws -> PairSnapshot {
    try #require(snapshots.first { $0.record.id == PairID(pair) }, sourceLocation: sourceLocation)
}

/// The send ids of one direction's items, in order.
func sendIDs(_ snapshot: PairSnapshot, _ direction: Role) -> [String] {
    snapshot.directions[direction]?.items.map(\.sendID) ?? []
}
