/// A client frame that is only an `id` (`pair.begin`, `unpair`, `outstanding` requests).
public struct Request: JSONRepresentable, Hashable {
    public var id: String

    public init(id: String) { self.id = id }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
    }

    public var json: JSONValue { ["id": .string(id)] }
}

/// relay → phone: the pairing code to type on the watch.
public struct PairCode: JSONRepresentable, Hashable {
    public var re: String
    /// Six digits.
    public var code: String
    public var expiresAt: Timestamp

    /// Whether `code` has a pairing code's form: six ASCII digits (§6.1; anything else is
    /// `pairing_code_invalid` at the relay, §6.3).
    public static func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == 6 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    public init(re: String, code: String, expiresAt: Timestamp) {
        self.re = re
        self.code = code
        self.expiresAt = expiresAt
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
        code = try r.string("code")
        expiresAt = try r.timestamp("expiresAt")
    }

    public var json: JSONValue {
        ["re": .string(re), "code": .string(code), "expiresAt": .string(expiresAt.iso8601)]
    }
}

/// watch → relay: join the phone that showed `code`.
public struct PairJoin: JSONRepresentable, Hashable {
    public var id: String
    public var code: String

    public init(id: String, code: String) {
        self.id = id
        self.code = code
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
        code = try r.string("code")
    }

    public var json: JSONValue { ["id": .string(id), "code": .string(code)] }
}

/// relay → both devices: the pair exists; here is this device's token.
public struct Paired: JSONRepresentable, Hashable {
    /// Set on the watch's copy (answers its `pair.join`).
    public var re: String?
    public var pairID: String
    /// This device's token for later `hello`s (base64url, ≥ 43 characters).
    public var token: String
    public var peer: PeerInfo

    public init(re: String? = nil, pairID: String, token: String, peer: PeerInfo) {
        self.re = re
        self.pairID = pairID
        self.token = token
        self.peer = peer
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.optionalID("re")
        pairID = try r.string("pairId")
        token = try r.string("token")
        peer = try PeerInfo(reader: r.object("peer"))
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("re", re)
        b.set("pairId", pairID)
        b.set("token", token)
        b.set("peer", peer)
        return b.json
    }
}

/// relay → both devices: the pair was dissolved.
public struct Unpaired: JSONRepresentable, Hashable {
    /// Set on the initiator's copy.
    public var re: String?
    public var reason: String

    public init(re: String? = nil, reason: String) {
        self.re = re
        self.reason = reason
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.optionalID("re")
        reason = try r.string("reason")
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("re", re)
        b.set("reason", reason)
        return b.json
    }
}
