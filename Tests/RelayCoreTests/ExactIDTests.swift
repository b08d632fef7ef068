import RelayCore
import RelayProtocol
import Testing

/// Ids are strings of code points (PROTOCOL.md §3.3). Swift's `String` compares canonically
/// equivalent strings equal, so the relay took `"e\u{301}"` for a retry of `"\u{E9}"`: answered
/// `accepted` and never stored or delivered. (A `==` on `[String]` would not see it either: the
/// checks here compare code points.)
@Suite struct ExactIDTests {
    static let composed = "\u{E9}"  // é
    static let decomposed = "e\u{301}"  // e + combining acute accent

    static func scalars(_ ids: [String]?) -> [[UInt32]] { (ids ?? []).map { $0.unicodeScalars.map(\.value) } }

    @Test(arguments: [false, true])
    func idsThatDifferOnlyByNormalizationAreTwoItems(restarting: Bool) {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        let payloads = [Payload(kind: "k", ["n": .int(0)]), Payload(kind: "k", ["n": .int(1)])]
        for (n, id) in [Self.composed, Self.decomposed].enumerated() {
            let out = h.send(watch, id: id, mode: .userInfo, payloads[n])
            #expect(out.frames(to: watch).compactMap(\.accepted).map { Self.scalars([$0.re]) } == [Self.scalars([id])])
        }
        #expect(Self.scalars(h.outstanding(watch)) == Self.scalars([Self.composed, Self.decomposed]))
        if restarting { h.restart() }
        let (p2, out) = h.reconnect(.phone)
        let delivered = out.delivers(to: p2)
        #expect(Self.scalars(delivered.map(\.id)) == Self.scalars([Self.composed, Self.decomposed]), "both, in order")
        #expect(delivered.map(\.payload) == payloads)
    }

    @Test func aCancelReachesOnlyTheExactID() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        h.send(watch, id: Self.composed, mode: .userInfo)
        let out = h.send(watch, .cancel(Cancel(id: "c-1", target: Self.decomposed)))
        #expect(out.errors(to: watch).map(\.code) == [.unknownID], "no send \\u{65}\\u{301}: \(out.trace)")
        #expect(Self.scalars(h.outstanding(watch)) == Self.scalars([Self.composed]))
    }

    @Test func aReplyReachesOnlyTheExactRequest() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "\u{C5}q", mode: .message, wantsReply: true)  // Å, as one code point
        let wrong = h.send(phone, .reply(ClientReply(id: "r-1", re: "\u{212B}q", payload: Payload(kind: "k"))))  // Ångström sign
        #expect(wrong.errors(to: phone).map(\.code) == [.unknownID])
        let right = h.send(phone, .reply(ClientReply(id: "r-2", re: "\u{C5}q", payload: Payload(kind: "k"))))
        #expect(right.frames(to: watch).count == 1, "\(right.trace)")
    }

    /// Payload member names are not ids: two that differ only by normalization cannot both be
    /// keys of the receiver's dictionary (`[String: Any]`), so the relay refuses them, saying so
    /// (it said "duplicate key", naming one of them). The same name twice is a duplicate.
    @Test func payloadKeysThatDifferOnlyByNormalizationAreRefusedSayingSo() {
        var h = RelayHarness()
        let (_, watch) = h.pairDevices()
        let two = h.send(watch, #"{"type":"send","id":"k-1","mode":"message","payload":{"kind":"k","\u00e9":1,"e\u0301":2}}"#)
        #expect(two.errors(to: watch).map(\.code) == [.badJSON])
        #expect(two.worded(to: watch).first?.message.contains("(U+E9) and 'e\u{301}' (U+65 U+301) differ only by Unicode normalization") == true, "\(two.trace)")
        let same = h.send(watch, #"{"type":"send","id":"k-2","mode":"message","payload":{"kind":"k","\u00e9":1,"\u00e9":2}}"#)
        #expect(same.worded(to: watch).first?.message.contains("duplicate key") == true, "\(same.trace)")
    }

    /// Equivalent spellings are different ids, and must not share a hash either: with
    /// `String`'s hash they all did, and a paired client could fill a queue with 10,000 ids of
    /// one hash (21 letters with two combining marks: 2^21 spellings), making every lookup in
    /// it walk them all on the relay's one thread.
    @Test func equivalentSpellingsHashApart() {
        let marks: [(Character, Character)] = [("\u{301}", "\u{316}"), ("\u{316}", "\u{301}")]
        var ids: [ExactID] = []
        for n in 0..<1024 {
            let letters = (0..<10).map { bit in
                let (first, second) = marks[(n >> bit) & 1]
                return "a" + String(first) + String(second)
            }
            ids.append(ExactID(letters.joined()))
        }
        #expect(Set(ids.map(\.text)).count == 1, "one string as Swift compares them")
        #expect(Set(ids).count == 1024, "1,024 ids")
        #expect(Set(ids.map(\.hashValue)).count == 1024, "and 1,024 hashes")
    }
}
