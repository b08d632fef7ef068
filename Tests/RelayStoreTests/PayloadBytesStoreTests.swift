import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing

@testable import RelayStore

/// The store keeps a payload's bytes as the sender wrote them: a queued item and a direction's
/// last context come back from a restart with the same bytes, not re-encoded.
struct PayloadBytesStoreTests {
    static let raw = "{ \"kind\" : \"big\" , \"n\" : 18446744073709551616, \"z\" : -0, \"o\" : 1.0,\n"
        + #" "e" : "\u00e9\/é" }"#

    @Test func itemsAndTheLastContextReloadWithTheSendersBytes() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path("relay.sqlite")
        let payload = try Payload(bytes: Array(Self.raw.utf8))
        let p = PairID("p1")
        let context = Deliver(seq: 4, mode: .context, id: "ctx", from: .phone, sentAt: Fixture.now, payload: payload)
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")),
            .insertItem(p, direction: .phone, QueuedItem(sendID: "a", mode: .userInfo, payload: payload, acceptedAt: Fixture.now)),
            .setLastSentContext(p, direction: .phone, context),
        ])

        let loaded = try snapshot("p1", in: await reload(path))
        let phone = try #require(loaded.directions[.phone])
        #expect(phone.items.map(\.payload.encoded) == [Array(Self.raw.utf8)])
        #expect(phone.lastSentContext?.payload.encoded == Array(Self.raw.utf8))
        #expect(phone.lastSentContext == context)
    }

    @Test func theIndexLeavesUnsentPayloadsInTheFileKeepingTheirSizesAndTheyReadBackAsSent() throws {
        let directory = TemporaryDirectory()
        let storage = try SQLiteRelayStorage(path: directory.path("relay.sqlite"))
        let payload = try Payload(bytes: Array(Self.raw.utf8))
        let p = PairID("p1")
        let unsent = QueuedItem(sendID: "a", mode: .userInfo, payload: payload, acceptedAt: Fixture.now)
        let sent = QueuedItem(sendID: "b", mode: .userInfo, payload: payload, acceptedAt: Fixture.now, seq: 1)
        try storage.apply(
            [.insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, unsent), .insertItem(p, direction: .phone, sent)],
            urgent: true)

        let items = try #require(try storage.loadIndex(now: Fixture.now).first?.directions[.phone]?.items)
        #expect(items.map(\.sendID) == ["a", "b"])
        #expect(items.map(\.isPayloadLoaded) == [false, true], "only the sent item keeps its payload")
        #expect(items.map(\.size) == [payload.encodedSize, payload.encodedSize], "the quotas still count both")
        let read = try storage.loadPayloads(p, direction: .phone, sendIDs: ["a", "gone"])
        #expect(read.keys.map(\.text) == ["a"], "an id not stored is left out")
        #expect(read[ExactID("a")]?.encoded == Array(Self.raw.utf8), "the sender's bytes")
    }

    /// Two ids that differ only by Unicode normalization are two items in the file and in the
    /// store's row map (a `String`-keyed map took them for one).
    @Test func idsThatDifferOnlyByNormalizationAreTwoRows() throws {
        let directory = TemporaryDirectory()
        let storage = try SQLiteRelayStorage(path: directory.path("relay.sqlite"))
        let p = PairID("p1")
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        let first = QueuedItem(sendID: composed, mode: .userInfo, payload: Payload(kind: "one"), acceptedAt: Fixture.now)
        let second = QueuedItem(sendID: decomposed, mode: .userInfo, payload: Payload(kind: "two"), acceptedAt: Fixture.now)
        try storage.apply(
            [.insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, first), .insertItem(p, direction: .phone, second)],
            urgent: true)
        let read = try storage.loadPayloads(p, direction: .phone, sendIDs: [composed, decomposed])
        #expect(read[ExactID(composed)] == Payload(kind: "one") && read[ExactID(decomposed)] == Payload(kind: "two"))
        try storage.apply([.deleteItems(p, direction: .phone, sendIDs: [decomposed])], urgent: true)
        let left = try #require(try storage.loadIndex(now: Fixture.now).first?.directions[.phone]?.items)
        #expect(left.map { Array($0.sendID.unicodeScalars) } == [Array(composed.unicodeScalars)])
    }
}
