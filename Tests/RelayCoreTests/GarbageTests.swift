import RelayCore
import RelayProtocol
import TestSupport
import Testing

/// Random and mutated input never crashes the core, and every refusal is one well-formed
/// `error` (Output checks every frame's wire form, code, wcCode and message).
@Suite struct GarbageTests {
    @Test func randomByteStringsAreEachAnsweredWithOneErrorOnFreshAndPairedLinks() {
        var rng = SeededGenerator(seed: 0x5EED_0001)
        var targets = Targets()
        for n in 0..<1_000 {
            let bytes = Self.randomBytes(&rng)
            targets.check(bytes, on: n % 3)
        }
        #expect(targets.refusals > 900)
    }

    @Test func mutatedValidVectorsNeverCrashAndEveryRefusalIsTheCodecsError() {
        var rng = SeededGenerator(seed: 0x5EED_0002)
        let valid = ConformanceVectors.validClient
        #expect(valid.count >= 10)
        var targets = Targets()
        for n in 0..<1_000 {
            var bytes = valid[Int.random(in: 0..<valid.count, using: &rng)]
            for _ in 0..<Int.random(in: 1...3, using: &rng) { Self.mutate(&bytes, &rng) }
            targets.check(bytes, on: n % 3)
        }
        #expect(targets.refusals > 500)
    }

    // MARK: - Helpers

    /// A fresh link (a new one each time) or a paired phone or watch (re-paired once disturbed).
    struct Targets {
        var fresh = RelayHarness()
        var paired = RelayHarness()
        var links: (phone: LinkID, watch: LinkID)
        var refusals = 0

        init() { links = paired.pairDevices() }

        mutating func check(_ bytes: [UInt8], on target: Int) {
            let expected: ProtocolError?
            do {
                _ = try FrameCodec.decodeClientFrame(bytes)
                expected = nil
            } catch {
                expected = error
            }
            let link: LinkID
            let out: Output
            if target == 0 {
                link = fresh.open()
                out = fresh.handle(.frame(link, bytes))
            } else {
                link = target == 1 ? links.phone : links.watch
                paired.advance(ms: 1_000)  // stay clear of the error limit
                paired.tick()  // timeouts of earlier accepted requests are not this frame's answer
                out = paired.handle(.frame(link, bytes))
            }
            if let e = expected {
                refusals += 1
                #expect(out.effects == [.send(link, errorFrame(e.code, re: e.re))], "\(String(decoding: bytes, as: UTF8.self))")
            } else {
                // A frame that decodes may do anything legal; a fresh link still needs hello first.
                if target == 0, out.frames(to: link).first?.welcome == nil {
                    #expect(out.frames(to: link).first?.error != nil)
                }
            }
            if target != 0, out.effects.contains(where: Self.disturbs) {
                paired = RelayHarness()
                links = paired.pairDevices()
            }
        }

        /// A close, an unpair or a new pair: start again from a clean pair.
        static func disturbs(_ e: Effect) -> Bool {
            switch e {
            case .close: return true
            case .send(_, let f): return f.type == .unpaired || f.type == .paired
            case .persist: return false
            }
        }
    }

    static func randomBytes(_ rng: inout SeededGenerator) -> [UInt8] {
        let count = Int.random(in: 0...200, using: &rng)
        let jsonish = Array(#"{}[]":, \truefalsn0123456789-.eE"#.utf8)
        return (0..<count).map { _ in
            Bool.random(using: &rng) ? UInt8.random(in: 0...255, using: &rng) : jsonish.randomElement(using: &rng)!
        }
    }

    static func mutate(_ bytes: inout [UInt8], _ rng: inout SeededGenerator) {
        let structural = Array(#"{}[]":,\ 0123456789-.eEtfn"#.utf8)
        guard !bytes.isEmpty else {
            bytes = [structural.randomElement(using: &rng)!]
            return
        }
        let i = Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
        case 1: bytes[i] = structural.randomElement(using: &rng)!
        case 2: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...8, using: &rng)))
        case 3: bytes.insert(contentsOf: (0..<Int.random(in: 1...4, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: i)
        case 4: bytes.removeSubrange(i...)
        default:
            let end = min(bytes.count, i + Int.random(in: 1...16, using: &rng))
            bytes.insert(contentsOf: bytes[i..<end], at: end)
        }
    }
}
