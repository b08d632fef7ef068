import RelayCore
import RelayProtocol
import Testing

/// One action of the core, as a test compares it: frames as decoded from their wire
/// bytes with error messages blanked (their wording is free), closes without reasons.
enum Effect: Hashable, CustomStringConvertible {
    case send(LinkID, RelayFrame)
    case close(LinkID, CloseCode)
    case persist(StoreMutation)

    var description: String {
        switch self {
        case .send(let l, let f): return "\(f.type) → \(l)"
        case .close(let l, let c): return "close \(c) → \(l)"
        case .persist(let m): return "persist \(m.name)"
        }
    }
}

/// What the core did for one event.
struct Output {
    /// The actions exactly as the core returned them.
    var actions: [RelayAction]
    var effects: [Effect] = []

    /// Decodes every frame from its wire encoding and checks that every `error` is well formed.
    init(_ actions: [RelayAction], sourceLocation: SourceLocation = #_sourceLocation) {
        self.actions = actions
        for action in actions {
            switch action {
            case .persist(let m), .persistAhead(let m): effects.append(.persist(m))
            case .awaitSeqReservation, .awaitStore, .loadPayloads: break
            case .close(let l, let c, _): effects.append(.close(l, c))
            case .send(let l, let frame):
                let bytes = FrameCodec.encode(frame)
                guard let decoded = try? FrameCodec.decodeRelayFrame(bytes) else {
                    Issue.record("relay frame does not decode: \(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
                    continue
                }
                #expect(decoded == frame, "relay frame survives its wire form", sourceLocation: sourceLocation)
                if case .error(var e) = decoded {
                    #expect(ErrorCode.all.contains(e.code), "known code \(e.code)", sourceLocation: sourceLocation)
                    #expect(e.wcCode == e.code.wcCode, "wcCode of \(e.code)", sourceLocation: sourceLocation)
                    #expect(!e.message.isEmpty, "error \(e.code) says what was wrong", sourceLocation: sourceLocation)
                    e.message = ""
                    effects.append(.send(l, .error(e)))
                } else {
                    effects.append(.send(l, decoded))
                }
            }
        }
    }

    /// Frames sent, in order.
    var sends: [(link: LinkID, frame: RelayFrame)] {
        effects.compactMap { if case .send(let l, let f) = $0 { (l, f) } else { nil } }
    }

    /// Frames sent to `link`, in order.
    func frames(to link: LinkID) -> [RelayFrame] { sends.filter { $0.link == link }.map(\.frame) }

    var closes: [(link: LinkID, code: CloseCode)] {
        effects.compactMap { if case .close(let l, let c) = $0 { (l, c) } else { nil } }
    }

    func closeCode(of link: LinkID) -> CloseCode? { closes.first { $0.link == link }?.code }

    var mutations: [StoreMutation] {
        effects.compactMap { if case .persist(let m) = $0 { m } else { nil } }
    }

    func delivers(to link: LinkID) -> [Deliver] { frames(to: link).compactMap(\.deliver) }
    func errors(to link: LinkID) -> [ErrorFrame] { frames(to: link).compactMap(\.error) }
    /// `error` frames sent to `link` with their messages (``errors(to:)`` blanks them).
    func worded(to link: LinkID) -> [ErrorFrame] {
        actions.compactMap { if case .send(link, .error(let e)) = $0 { e } else { nil } }
    }
    func seqs(to link: LinkID) -> [Int64] { delivers(to: link).map(\.seq) }

    /// `effects` as short strings ("persist insertItem", "accepted → link-1").
    var trace: [String] { effects.map(\.description) }
}

/// The frame an error is expected as (message blanked, wcCode as the protocol says).
func errorFrame(_ code: ErrorCode, re: String?) -> RelayFrame {
    .error(ErrorFrame(re: re, code: code, message: "", wcCode: code.wcCode))
}

extension RelayFrame {
    var deliver: Deliver? { if case .deliver(let f) = self { f } else { nil } }
    var error: ErrorFrame? { if case .error(let f) = self { f } else { nil } }
    var welcome: Welcome? { if case .welcome(let f) = self { f } else { nil } }
    var paired: Paired? { if case .paired(let f) = self { f } else { nil } }
    var pairCode: PairCode? { if case .pairCode(let f) = self { f } else { nil } }
    var accepted: Accepted? { if case .accepted(let f) = self { f } else { nil } }
    var transferred: Transferred? { if case .transferred(let f) = self { f } else { nil } }
}

extension StoreMutation {
    /// The case name, for traces.
    var name: String {
        switch self {
        case .insertPair: return "insertPair"
        case .deletePair: return "deletePair"
        case .insertItem: return "insertItem"
        case .setItemSeq: return "setItemSeq"
        case .deleteItems: return "deleteItems"
        case .setLastSentContext: return "setLastSentContext"
        case .setSeqReserved: return "setSeqReserved"
        case .addComplicationUse: return "addComplicationUse"
        case .appendPendingTransferred: return "appendPendingTransferred"
        case .clearPendingTransferred: return "clearPendingTransferred"
        case .recordFinished: return "recordFinished"
        case .recordCancelled: return "recordCancelled"
        case .recordWrongPairingCode: return "recordWrongPairingCode"
        }
    }
}
