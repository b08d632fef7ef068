/// The relay's limits, announced in `welcome.limits` (WatchConnectivity's undocumented
/// sizes: 64 KiB for messages and userInfo, 256 KiB for the application context).
public struct Limits: JSONRepresentable, Hashable {
    /// Largest `message` (and `reply`) payload, compact JSON bytes. Default 65536.
    public var messageBytes: Int
    /// Largest `userInfo` or `complication` payload. Default 65536.
    public var userInfoBytes: Int
    /// Largest `context` payload. Default 262144.
    public var contextBytes: Int
    /// How long the relay waits for a reply before `reply_timeout`. Default 10000 ms.
    public var replyTimeoutMs: Int
    /// Complication transfers per pair per rolling 24 h. Default 50.
    public var complicationsPerDay: Int
    /// Complication transfers left now (only meaningful in `welcome`).
    public var complicationsRemaining: Int
    /// The delivery window, items: durable `deliver`s the relay sends on one connection before
    /// the receiver acks (PROTOCOL.md §8.7). Default 256.
    public var windowItems: Int
    /// The delivery window, bytes: no further durable `deliver` goes out while the unacked ones'
    /// payloads (§3.6 sizes) reach this; one item always goes. Default 1 MiB.
    public var windowBytes: Int

    public init(
        messageBytes: Int = 65536, userInfoBytes: Int = 65536, contextBytes: Int = 262_144,
        replyTimeoutMs: Int = 10000, complicationsPerDay: Int = 50, complicationsRemaining: Int? = nil,
        windowItems: Int = 256, windowBytes: Int = 1 << 20
    ) {
        self.messageBytes = messageBytes
        self.userInfoBytes = userInfoBytes
        self.contextBytes = contextBytes
        self.replyTimeoutMs = replyTimeoutMs
        self.complicationsPerDay = complicationsPerDay
        self.complicationsRemaining = complicationsRemaining ?? complicationsPerDay
        self.windowItems = windowItems
        self.windowBytes = windowBytes
    }

    /// The protocol's defaults.
    public static let `default` = Limits()

    /// The relay's hard cap on one WebSocket message (default 1 MiB).
    public static let defaultMaxFrameBytes = 1 << 20

    /// The payload limit for `mode`.
    public func payloadLimit(for mode: DeliveryMode) -> Int {
        switch mode {
        case .context: return contextBytes
        case .userInfo, .complication: return userInfoBytes
        default: return messageBytes
        }
    }

    /// Fails with `payload_too_large` if the frame's payload is over its mode's limit.
    /// Frames without a payload pass.
    public func check(_ frame: ClientFrame) throws(ProtocolError) {
        switch frame {
        case .send(let s): try check(s)
        case .reply(let r): try check(size: r.payload.encodedSize, limit: messageBytes, id: r.id)
        default: return
        }
    }

    /// ``check(_:)-(ClientFrame)`` of a `send` (the relay's path: no frame made around it).
    public func check(_ send: Send) throws(ProtocolError) {
        try check(size: send.payload.encodedSize, limit: payloadLimit(for: send.mode), id: send.id)
    }

    private func check(size: Int, limit: Int, id: String) throws(ProtocolError) {
        if size > limit {
            throw ProtocolError(
                .payloadTooLarge, field: "payload", "payload is \(size) bytes; the limit is \(limit)", re: id)
        }
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        messageBytes = Int(try r.int("messageBytes", min: 0))
        userInfoBytes = Int(try r.int("userInfoBytes", min: 0))
        contextBytes = Int(try r.int("contextBytes", min: 0))
        replyTimeoutMs = Int(try r.int("replyTimeoutMs", min: 0))
        complicationsPerDay = Int(try r.int("complicationsPerDay", min: 0))
        complicationsRemaining = Int(try r.int("complicationsRemaining", min: 0))
        windowItems = Int(try r.int("windowItems", min: 1))
        windowBytes = Int(try r.int("windowBytes", min: 1))
    }

    public var json: JSONValue {
        [
            "messageBytes": .int(Int64(messageBytes)), "userInfoBytes": .int(Int64(userInfoBytes)),
            "contextBytes": .int(Int64(contextBytes)), "replyTimeoutMs": .int(Int64(replyTimeoutMs)),
            "complicationsPerDay": .int(Int64(complicationsPerDay)),
            "complicationsRemaining": .int(Int64(complicationsRemaining)),
            "windowItems": .int(Int64(windowItems)), "windowBytes": .int(Int64(windowBytes)),
        ]
    }
}
