/// A frame a device (phone or watch) sends to the relay.
public enum ClientFrame: Sendable, Hashable {
    case hello(Hello)
    case pairBegin(Request)
    case pairJoin(PairJoin)
    case unpair(Request)
    case state(StateChange)
    case send(Send)
    case reply(ClientReply)
    case ack(Ack)
    case cancel(Cancel)
    case outstanding(Request)
    /// The watch's widget faces for the relay's console (optional; never reaches the peer).
    case faces(Faces)

    /// Every client frame type.
    public static let types: [FrameType] = [
        .hello, .pairBegin, .pairJoin, .unpair, .state, .send, .reply, .ack, .cancel, .outstanding, .faces,
    ]

    /// The frame's `type`.
    public var type: FrameType {
        switch self {
        case .hello: return .hello
        case .pairBegin: return .pairBegin
        case .pairJoin: return .pairJoin
        case .unpair: return .unpair
        case .state: return .state
        case .send: return .send
        case .reply: return .reply
        case .ack: return .ack
        case .cancel: return .cancel
        case .outstanding: return .outstanding
        case .faces: return .faces
        }
    }

    /// The frame's `id`, if it has one.
    public var id: String? {
        switch self {
        case .hello(let f): return f.id
        case .pairBegin(let f), .unpair(let f), .outstanding(let f): return f.id
        case .pairJoin(let f): return f.id
        case .state(let f): return f.id
        case .send(let f): return f.id
        case .reply(let f): return f.id
        case .ack(let f): return f.id
        case .cancel(let f): return f.id
        case .faces(let f): return f.id
        }
    }

    /// Decodes the body of a frame of `type`; `nil` when `type` is not a client frame.
    static func decode(type: FrameType, _ r: ObjectReader) throws(ProtocolError) -> ClientFrame? {
        switch type {
        case .hello: return .hello(try Hello(reader: r))
        case .pairBegin: return .pairBegin(try Request(reader: r))
        case .pairJoin: return .pairJoin(try PairJoin(reader: r))
        case .unpair: return .unpair(try Request(reader: r))
        case .state: return .state(try StateChange(reader: r))
        case .send: return .send(try Send(reader: r))
        case .reply: return .reply(try ClientReply(reader: r))
        case .ack: return .ack(try Ack(reader: r))
        case .cancel: return .cancel(try Cancel(reader: r))
        case .outstanding: return .outstanding(try Request(reader: r))
        case .faces: return .faces(try Faces(reader: r))
        default: return nil
        }
    }

    /// The body without `type`.
    var body: JSONValue {
        switch self {
        case .hello(let f): return f.json
        case .pairBegin(let f), .unpair(let f), .outstanding(let f): return f.json
        case .pairJoin(let f): return f.json
        case .state(let f): return f.json
        case .send(let f): return f.json
        case .reply(let f): return f.json
        case .ack(let f): return f.json
        case .cancel(let f): return f.json
        case .faces(let f): return f.json
        }
    }
}

/// A frame the relay sends to a device.
public enum RelayFrame: Sendable, Hashable {
    /// Boxed: a `Welcome` (297 bytes inline) made every frame, and every action carrying one, that
    /// large; each copy of a `deliver` moved 298 bytes. A welcome is one per connection.
    indirect case welcome(Welcome)
    case pairCode(PairCode)
    case paired(Paired)
    case unpaired(Unpaired)
    case peer(PeerChange)
    case accepted(Accepted)
    case deliver(Deliver)
    case reply(RelayReply)
    case transferred(Transferred)
    case cancelled(Answer)
    case outstanding(OutstandingList)
    case error(ErrorFrame)

    /// Every relay frame type.
    public static let types: [FrameType] = [
        .welcome, .pairCode, .paired, .unpaired, .peer, .accepted, .deliver, .reply, .transferred, .cancelled,
        .outstanding, .error,
    ]

    /// The frame's `type`.
    public var type: FrameType {
        switch self {
        case .welcome: return .welcome
        case .pairCode: return .pairCode
        case .paired: return .paired
        case .unpaired: return .unpaired
        case .peer: return .peer
        case .accepted: return .accepted
        case .deliver: return .deliver
        case .reply: return .reply
        case .transferred: return .transferred
        case .cancelled: return .cancelled
        case .outstanding: return .outstanding
        case .error: return .error
        }
    }

    /// Decodes the body of a frame of `type`; `nil` when `type` is not a relay frame.
    static func decode(type: FrameType, _ r: ObjectReader) throws(ProtocolError) -> RelayFrame? {
        switch type {
        case .welcome: return .welcome(try Welcome(reader: r))
        case .pairCode: return .pairCode(try PairCode(reader: r))
        case .paired: return .paired(try Paired(reader: r))
        case .unpaired: return .unpaired(try Unpaired(reader: r))
        case .peer: return .peer(try PeerChange(reader: r))
        case .accepted: return .accepted(try Accepted(reader: r))
        case .deliver: return .deliver(try Deliver(reader: r))
        case .reply: return .reply(try RelayReply(reader: r))
        case .transferred: return .transferred(try Transferred(reader: r))
        case .cancelled: return .cancelled(try Answer(reader: r))
        case .outstanding: return .outstanding(try OutstandingList(reader: r))
        case .error: return .error(try ErrorFrame(reader: r))
        default: return nil
        }
    }

    /// The body without `type`.
    var body: JSONValue {
        switch self {
        case .welcome(let f): return f.json
        case .pairCode(let f): return f.json
        case .paired(let f): return f.json
        case .unpaired(let f): return f.json
        case .peer(let f): return f.json
        case .accepted(let f): return f.json
        case .deliver(let f): return f.json
        case .reply(let f): return f.json
        case .transferred(let f): return f.json
        case .cancelled(let f): return f.json
        case .outstanding(let f): return f.json
        case .error(let f): return f.json
        }
    }
}
