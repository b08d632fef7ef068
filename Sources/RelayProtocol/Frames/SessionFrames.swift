/// client → relay: the first frame of every connection.
public struct Hello: JSONRepresentable, Hashable {
    public var id: String
    /// The protocol version the client speaks (v1: `1`).
    public var `protocol`: Int64
    public var role: Role
    /// The device's display name.
    public var deviceName: String
    /// The token from an earlier `paired`, if any.
    public var token: String?
    /// Watch only: whether the watch app is in the foreground (default true).
    public var foreground: Bool?
    /// The highest `deliver.seq` this device processed; acks cumulatively.
    public var lastSeq: Int64?

    public init(
        id: String, protocol: Int64 = 1, role: Role, deviceName: String, token: String? = nil,
        foreground: Bool? = nil, lastSeq: Int64? = nil
    ) {
        self.id = id
        self.protocol = `protocol`
        self.role = role
        self.deviceName = deviceName
        self.token = token
        self.foreground = foreground
        self.lastSeq = lastSeq
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.id()
        `protocol` = try r.int("protocol")
        role = try r.oneOf("role", Role.all)
        deviceName = try r.object("device").string("name", length: 1...128)
        token = try r.optionalString("token")
        foreground = try r.optionalBool("foreground")
        lastSeq = try r.optionalInt("lastSeq", min: 0)
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("protocol", `protocol`)
        b.set("role", role)
        b["device"] = ["name": .string(deviceName)]
        b.set("token", token)
        b.set("foreground", foreground)
        b.set("lastSeq", lastSeq)
        return b.json
    }
}

/// The peer as a device sees it.
public struct PeerInfo: JSONRepresentable, Hashable {
    public var name: String
    public var connected: Bool
    public var reachable: Bool
    /// Whether the peer's app is installed (PROTOCOL.md §7.1); on the wire only when false.
    public var appInstalled: Bool

    public init(name: String, connected: Bool, reachable: Bool, appInstalled: Bool = true) {
        self.name = name
        self.connected = connected
        self.reachable = reachable
        self.appInstalled = appInstalled
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        name = try r.string("name")
        connected = try r.bool("connected")
        reachable = try r.bool("reachable")
        appInstalled = try r.optionalBool("appInstalled") ?? true
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("name", name)
        b.set("connected", connected)
        b.set("reachable", reachable)
        b.set("appInstalled", appInstalled ? nil : false)
        return b.json
    }
}

/// relay → client: the answer to `hello`.
public struct Welcome: JSONRepresentable, Hashable {
    public var re: String
    public var `protocol`: Int64
    /// This connection's session id.
    public var session: String
    public var role: Role
    public var paired: Bool
    public var pairID: String?
    public var peer: PeerInfo?
    public var limits: Limits
    /// WC `receivedApplicationContext`: the last context delivered to this device.
    public var context: Deliver?

    public init(
        re: String, protocol: Int64 = 1, session: String, role: Role, paired: Bool, pairID: String? = nil,
        peer: PeerInfo? = nil, limits: Limits, context: Deliver? = nil
    ) {
        self.re = re
        self.protocol = `protocol`
        self.session = session
        self.role = role
        self.paired = paired
        self.pairID = pairID
        self.peer = peer
        self.limits = limits
        self.context = context
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.id("re")
        `protocol` = try r.int("protocol")
        session = try r.string("session")
        role = try r.oneOf("role", Role.all)
        paired = try r.bool("paired")
        pairID = try r.optionalString("pairId")
        peer = try r.optionalObject("peer").map { (o) throws(ProtocolError) in try PeerInfo(reader: o) }
        limits = try Limits(reader: r.object("limits"))
        context = try r.optionalObject("context").map { (o) throws(ProtocolError) in try Deliver(reader: o) }
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("re", re)
        b.set("protocol", `protocol`)
        b.set("session", session)
        b.set("role", role)
        b.set("paired", paired)
        b.set("pairId", pairID)
        b.set("peer", peer)
        b.set("limits", limits)
        b.set("context", context)
        return b.json
    }
}

/// client → relay: the watch app moved to the foreground or background, or a device's app
/// was uninstalled (PROTOCOL.md §7, §7.1).
public struct StateChange: JSONRepresentable, Hashable {
    public var id: String?
    /// Watch only: the app's new state.
    public var foreground: Bool?
    /// `false`: the app was uninstalled (the device closes next); `true` changes nothing.
    public var appInstalled: Bool?

    public init(id: String? = nil, foreground: Bool? = nil, appInstalled: Bool? = nil) {
        self.id = id
        self.foreground = foreground
        self.appInstalled = appInstalled
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.optionalID()
        appInstalled = try r.optionalBool("appInstalled")
        // `foreground` is required unless `appInstalled` says what the frame is about.
        foreground = appInstalled == nil ? try r.bool("foreground") : try r.optionalBool("foreground")
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("foreground", foreground)
        b.set("appInstalled", appInstalled)
        return b.json
    }
}

/// relay → client: the peer's connection, reachability or app installation changed.
public struct PeerChange: JSONRepresentable, Hashable {
    public var connected: Bool
    public var reachable: Bool
    /// Whether the peer's app is installed (PROTOCOL.md §7.1); on the wire only when false.
    public var appInstalled: Bool

    public init(connected: Bool, reachable: Bool, appInstalled: Bool = true) {
        self.connected = connected
        self.reachable = reachable
        self.appInstalled = appInstalled
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        connected = try r.bool("connected")
        reachable = try r.bool("reachable")
        appInstalled = try r.optionalBool("appInstalled") ?? true
    }

    public var json: JSONValue {
        appInstalled
            ? ["connected": .bool(connected), "reachable": .bool(reachable)]
            : ["connected": .bool(connected), "reachable": .bool(reachable), "appInstalled": .bool(false)]
    }
}

/// relay → client: what went wrong with a frame.
public struct ErrorFrame: JSONRepresentable, Hashable {
    public var re: String?
    public var code: ErrorCode
    public var message: String
    /// The nearest `WCErrorCode`, when there is one.
    public var wcCode: Int?

    public init(re: String?, code: ErrorCode, message: String, wcCode: Int? = nil) {
        self.re = re
        self.code = code
        self.message = message
        self.wcCode = wcCode
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        re = try r.optionalID("re")
        code = ErrorCode(rawValue: try r.string("code"))
        message = try r.string("message")
        wcCode = try r.optionalInt("wcCode").map { Int($0) }
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("re", re)
        b.set("code", code.rawValue)
        b.set("message", message)
        b.set("wcCode", wcCode)
        return b.json
    }
}
