import RelayCore
import RelayProtocol
import RelayStore

/// Records and items for the relay store tests, SQLite's (`RelayStoreTests`) and Redis's
/// (`RelayRedisStoreTests`): both stores are held to the same shapes. Each suite calls it
/// `Fixture`.
public enum StoreFixture {
    public static let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    public static let hour: Int64 = 3_600_000

    /// A pair `id` with its phone `id-phone` and watch `id-watch` (a name beyond ASCII).
    public static func pair(_ id: String, createdAt: Timestamp = now) -> PairRecord {
        PairRecord(
            id: PairID(id), createdAt: createdAt,
            phone: DeviceRecord(
                id: DeviceID("\(id)-phone"), role: .phone, name: "iPhone of \(id)",
                tokenHash: TokenHasher.sha256Hex("\(id)-phone-token")),
            watch: DeviceRecord(
                id: DeviceID("\(id)-watch"), role: .watch, name: "Watch of \(id) 한국어 ✓",
                tokenHash: TokenHasher.sha256Hex("\(id)-watch-token")))
    }

    /// A queued item whose payload has every JSON shape a store must keep exactly: the
    /// largest integer, a fraction, null, nesting, text beyond the BMP.
    public static func item(
        _ sendID: String, mode: DeliveryMode = .userInfo, at time: Timestamp = now, seq: Int64? = nil
    ) -> QueuedItem {
        let payload = Payload(
            kind: "favorites.delete",
            [
                "login": .string("user-\(sendID)"), "count": .int(42), "big": .int(Int64.max), "flag": true,
                "none": .null, "nested": ["list": [1, "two", ["three": 3]], "unicode": "한국어 ✓ \u{1F600}"],
                "real": .double(0.1),
            ])
        return QueuedItem(sendID: sendID, mode: mode, payload: payload, acceptedAt: time, seq: seq)
    }

    /// A delivered context (a favorites snapshot) of `sender` with `seq`.
    public static func deliver(_ sendID: String, seq: Int64, from sender: Role) -> Deliver {
        Deliver(
            seq: seq, mode: .context, id: sendID, from: sender, sentAt: now,
            payload: Payload(kind: "favorites.snapshot", ["revision": .int(seq), "logins": ["octocat", "torvalds"]]),
            wantsReply: nil)
    }

    /// Wrong pairing codes in the order the core recorded them, and those a load at ``now``
    /// returns: the first locked an address for an hour (it counts that long, ahead of the
    /// others), the second stopped counting 80 s ago, an IPv6 address locked once.
    public static func wrongPairingCodes() -> (recorded: [WrongPairingCode], counting: [WrongPairingCode]) {
        func at(_ ms: Int64) -> Timestamp { now.adding(milliseconds: ms) }
        let recorded = [
            WrongPairingCode(address: "198.51.100.4", at: at(-300_000), addressLockedUntil: at(hour), countsUntil: at(hour)),
            WrongPairingCode(address: "203.0.113.7", at: at(-200_000), countsUntil: at(-80_000)),
            WrongPairingCode(address: "2001:db8::1", at: at(-100_000), countsUntil: at(20_000)),
            WrongPairingCode(address: "2001:db8::1", at: at(-50_000), addressLockedUntil: at(10_000), countsUntil: at(70_000)),
            WrongPairingCode(address: "203.0.113.7", at: at(-10_000), countsUntil: at(110_000)),
        ]
        return (recorded, [recorded[0], recorded[2], recorded[3], recorded[4]])
    }
}
