/// sender → relay: send a payload in one of the four modes.
public struct Send: JSONRepresentable, Hashable {
    public var id: String
    public var mode: DeliveryMode
    public var payload: Payload
    /// `message` only: the receiver must answer with `reply`.
    public var wantsReply: Bool?

    public init(id: String, mode: DeliveryMode, payload: Payload, wantsReply: Bool? = nil) {
        self.id = id
        self.mode = mode
        self.payload = payload
        self.wantsReply = wantsReply
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
        mode = try r.oneOf("mode", DeliveryMode.all)
        payload = try Payload(reader: r.object("payload"))
        try payload.requireKind(path: "payload", frameID: id)
        wantsReply = try r.optionalBool("wantsReply")
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("mode", mode)
        b.set("payload", payload)
        b.set("wantsReply", wantsReply)
        return b.json
    }
}

/// relay → sender: the relay took responsibility for a `send`.
public struct Accepted: JSONRepresentable, Hashable {
    public var re: String
    /// `complication` only: transfers left in the rolling 24 h.
    public var remaining: Int?
    /// `complication` only: `userInfo` when the budget was spent and it went as userInfo.
    public var fallback: DeliveryMode?

    public init(re: String, remaining: Int? = nil, fallback: DeliveryMode? = nil) {
        self.re = re
        self.remaining = remaining
        self.fallback = fallback
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
        remaining = try r.optionalInt("remaining", min: 0).map { Int($0) }
        fallback = try r.optionalString("fallback").map { DeliveryMode(rawValue: $0) }
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("re", re)
        b.set("remaining", remaining)
        b.set("fallback", fallback)
        return b.json
    }
}

/// relay → receiver: one item, with its per-pair, per-direction `seq`.
public struct Deliver: JSONRepresentable, Hashable {
    public var seq: Int64
    public var mode: DeliveryMode
    /// The sender's `send.id`.
    public var id: String
    public var from: Role
    public var sentAt: Timestamp
    public var payload: Payload
    public var wantsReply: Bool?

    public init(
        seq: Int64, mode: DeliveryMode, id: String, from: Role, sentAt: Timestamp, payload: Payload,
        wantsReply: Bool? = nil
    ) {
        self.seq = seq
        self.mode = mode
        self.id = id
        self.from = from
        self.sentAt = sentAt
        self.payload = payload
        self.wantsReply = wantsReply
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        seq = try r.int("seq", min: 1)
        mode = try r.oneOf("mode", DeliveryMode.all)
        id = try r.id()
        from = try r.oneOf("from", Role.all)
        sentAt = try r.timestamp("sentAt")
        payload = try Payload(reader: r.object("payload"))
        wantsReply = try r.optionalBool("wantsReply")
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("seq", seq)
        b.set("mode", mode)
        b.set("id", id)
        b.set("from", from)
        b.set("sentAt", sentAt)
        b.set("payload", payload)
        b.set("wantsReply", wantsReply)
        return b.json
    }

    /// The compact JSON of this item as the store keeps it (a `deliver` without `type`), the
    /// payload's bytes spliced as they are.
    public var storedBytes: [UInt8] { FrameCodec.encodeDeliver(self, withType: false) }

    /// Decodes ``storedBytes`` (any valid item JSON), the payload keeping its bytes.
    public init(storedBytes bytes: [UInt8]) throws(ProtocolError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw ProtocolError(.badJSON, "not a JSON text: \(error)")
        }
        try self.init(json: value)
        payload = payload.keepingRaw(JSONParser.rawMember(["payload"], in: bytes[...]))
    }
}

/// receiver → relay: the answer to a `message` sent with `wantsReply`.
public struct ClientReply: JSONRepresentable, Hashable {
    public var id: String
    /// The original `send.id`.
    public var re: String
    public var payload: Payload

    public init(id: String, re: String, payload: Payload) {
        self.id = id
        self.re = re
        self.payload = payload
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
        re = try r.id("re")
        payload = try Payload(reader: r.object("payload"))
    }

    public var json: JSONValue { ["id": .string(id), "re": .string(re), "payload": payload.json] }
}

/// relay → original sender: the reply to its `message`.
public struct RelayReply: JSONRepresentable, Hashable {
    /// The original `send.id`.
    public var re: String
    public var payload: Payload

    public init(re: String, payload: Payload) {
        self.re = re
        self.payload = payload
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
        payload = try Payload(reader: r.object("payload"))
    }

    public var json: JSONValue { ["re": .string(re), "payload": payload.json] }
}

/// receiver → relay: everything of this direction with `seq` ≤ this was processed.
public struct Ack: JSONRepresentable, Hashable {
    public var id: String?
    public var seq: Int64

    public init(id: String? = nil, seq: Int64) {
        self.id = id
        self.seq = seq
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.optionalID()
        seq = try r.int("seq", min: 1)
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("seq", seq)
        return b.json
    }
}

/// relay → sender: these userInfo/complication sends were acked by the peer.
public struct Transferred: JSONRepresentable, Hashable {
    public var ids: [String]

    public init(ids: [String]) { self.ids = ids }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        ids = try r.strings("ids")
    }

    public var json: JSONValue { ["ids": .array(ids.map { .string($0) })] }
}

/// sender → relay: cancel an undelivered userInfo or complication send.
public struct Cancel: JSONRepresentable, Hashable {
    public var id: String
    /// The `send.id` to cancel.
    public var target: String

    public init(id: String, target: String) {
        self.id = id
        self.target = target
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
        target = try r.id("target")
    }

    public var json: JSONValue { ["id": .string(id), "target": .string(target)] }
}

/// relay → client: an answer that carries only `re` (`cancelled`).
public struct Answer: JSONRepresentable, Hashable {
    public var re: String

    public init(re: String) { self.re = re }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
    }

    public var json: JSONValue { ["re": .string(re)] }
}

/// relay → sender: its durable sends not yet acked, cancelled or replaced.
public struct OutstandingList: JSONRepresentable, Hashable {
    public var re: String
    public var ids: [String]

    public init(re: String, ids: [String]) {
        self.re = re
        self.ids = ids
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
        ids = try r.strings("ids")
    }

    public var json: JSONValue { ["re": .string(re), "ids": .array(ids.map { .string($0) })] }
}
