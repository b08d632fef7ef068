import RelayCore
import RelayProtocol
import RelayStore

/// Records and items for the Redis store's tests (the same shapes as RelayStoreTests').
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
                id: DeviceID("\(id)-watch"), role: .watch, name: "Watch of \(id) 한국어 ✓",
                tokenHash: TokenHasher.sha256Hex("\(id)-watch-token")))
    }

    static func item(_ sendID: String, mode: DeliveryMode = .userInfo, seq: Int64? = nil) -> QueuedItem {
        let payload = Payload(
            kind: "favorites.delete",
            [
                "login": .string("user-\(sendID)"), "count": .int(42), "big": .int(Int64.max), "flag": true,
                "none": .null, "nested": ["list": [1, "two", ["three": 3]], "unicode": "한국어 ✓ \u{1F600}"],
                "real": .double(0.1),
            ])
        return QueuedItem(sendID: sendID, mode: mode, payload: payload, acceptedAt: now, seq: seq)
    }

    static func deliver(_ sendID: String, seq: Int64, from sender: Role) -> Deliver {
        Deliver(
            seq: seq, mode: .context, id: sendID, from: sender, sentAt: now,
            payload: Payload(kind: "favorites.snapshot", ["revision": .int(seq), "logins": ["octocat", "torvalds"]]),
            wantsReply: nil)
    }
}
