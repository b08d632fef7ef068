import Foundation
import RelayCore
import RelayProtocol
import Testing

@testable import RelayStore

// MARK: - Fixtures

enum Fixture {
    static let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    static let hour: Int64 = 3_600_000

    static func pair(_ id: String, createdAt: Timestamp = now) -> PairRecord {
        PairRecord(
            id: PairID(id), createdAt: createdAt,
            phone: DeviceRecord(
                id: DeviceID("\(id)-phone"), role: .phone, name: "iPhone of \(id)",
                tokenHash: TokenHasher.sha256Hex("\(id)-phone-token")),
            watch: DeviceRecord(
                id: DeviceID("\(id)-watch"), role: .watch, name: "Watch of \(id)",
                tokenHash: TokenHasher.sha256Hex("\(id)-watch-token")))
    }

    static func item(
        _ sendID: String, mode: DeliveryMode = .userInfo, at time: Timestamp = now, seq: Int64? = nil
    ) -> QueuedItem {
        let payload = Payload(
            kind: "favorites.delete",
            [
                "login": .string("user-\(sendID)"), "count": .int(42), "flag": true, "none": .null,
                "nested": ["list": [1, "two", ["three": 3]], "unicode": "한국어 ✓ \u{1F600}"],
            ])
        return QueuedItem(sendID: sendID, mode: mode, payload: payload, acceptedAt: time, seq: seq)
    }

    static func deliver(_ sendID: String, seq: Int64, from sender: Role) -> Deliver {
        Deliver(
            seq: seq, mode: .context, id: sendID, from: sender, sentAt: now,
            payload: Payload(kind: "favorites.snapshot", ["revision": .int(seq), "logins": ["octocat", "torvalds"]]),
            wantsReply: nil)
    }
}

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
