import CWebSockets

/// Server-side WebSocket callbacks: the upgrade filter and connection setup.
extension ServiceCore {
    /// LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: refuses (non-zero) an upgrade on another path,
    /// without the configured subprotocol, bound to the HTTP protocol, or that is not an RFC 6455
    /// handshake (``isRFC6455Handshake(_:)``).
    ///
    /// lws binds an upgrade that offers no `Sec-WebSocket-Protocol` to protocols[0] (HTTP) and
    /// would otherwise accept it; the filter runs for that protocol too, because both entries
    /// share this callback.
    func filterUpgrade(_ wsi: OpaquePointer) -> Int32 {
        guard case .server(let configuration, _) = role, shutdownDeadline == nil else { return 1 }
        guard LWSContextResources.isBoundToWebSocketProtocol(wsi) else { return 1 }
        guard Self.isRFC6455Handshake(wsi) else { return 1 }
        guard let path = Self.header(wsi, WSI_TOKEN_GET_URI), path == configuration.path else { return 1 }
        guard let offered = Self.header(wsi, WSI_TOKEN_PROTOCOL) else { return 1 }
        let names = offered.split(separator: ",").map { $0.trimmingSpaces }
        return names.contains(configuration.subprotocol[...]) ? 0 : 1
    }

    /// Whether the upgrade says `Sec-WebSocket-Version: 13` and carries a `Sec-WebSocket-Key`
    /// of 16 bytes in base64 (RFC 6455 §4.2.1). lws 4.1 checks neither: it answers 101 to any
    /// version, a missing one included (its `return 1` for an unknown version is commented out
    /// in `lws_process_ws_upgrade2`), and hashes whatever key it is given.
    static func isRFC6455Handshake(_ wsi: OpaquePointer) -> Bool {
        guard let version = header(wsi, WSI_TOKEN_VERSION), version[...].trimmingSpaces == "13" else { return false }
        guard let key = header(wsi, WSI_TOKEN_KEY).map({ Array($0[...].trimmingSpaces.utf8) }) else { return false }
        return isWebSocketKey(key)
    }

    /// 22 base64 digits and `==`: what encodes exactly 16 bytes.
    static func isWebSocketKey(_ key: [UInt8]) -> Bool {
        guard key.count == 24, key[22] == UInt8(ascii: "="), key[23] == UInt8(ascii: "=") else { return false }
        return key[..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                return true
            default:
                return false
            }
        }
    }

    /// LWS_CALLBACK_ESTABLISHED: registers the connection and reports `.opened`.
    func serverEstablished(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard case .server(let configuration, _) = role, let events = serverEvents, shutdownDeadline == nil, let user,
            LWSContextResources.isBoundToWebSocketProtocol(wsi)
        else { return -1 }
        let id = ConnectionID.next()
        // The per-session data is lws's (zero-filled, freed after CLOSED); it holds only this integer.
        user.storeBytes(of: id.rawValue, as: UInt64.self)
        let connection = ConnectionState(
            id: id, wsi: wsi, sink: .server(events), maxMessageBytes: configuration.maxMessageBytes,
            maxQueuedBytes: configuration.maxQueuedBytesPerConnection)
        connections[id] = connection
        let now = MonotonicClock.nanoseconds()
        connection.lastHeardAt = now
        keepalive?.opened(id, now: now)
        armKeepaliveTimer(now: now)
        connection.sink.opened(id, remoteAddress: Self.clientAddress(wsi, trustedProxies: configuration.trustedProxies))
        return 0
    }

    /// The client's address: the TCP peer's, or, when that peer is a trusted proxy, the last
    /// address of the upgrade's `X-Forwarded-For` (``ServerConfiguration/trustedProxies``).
    static func clientAddress(_ wsi: OpaquePointer, trustedProxies: Set<String>) -> String {
        let peer = peerAddress(wsi)
        guard !trustedProxies.isEmpty, trustedProxies.contains(peer) else { return peer }
        // Read whole: a client's own long header before the proxy's address must not hide it.
        return forwardedClient(header(wsi, WSI_TOKEN_X_FORWARDED_FOR, maxBytes: 65536)) ?? peer
    }

    /// The last address of an `X-Forwarded-For` value, if it is an IP address (plain form for
    /// IPv4-mapped ones); nil otherwise. The last one is the address the nearest proxy saw; the
    /// earlier ones are whatever the client and proxies before it wrote.
    static func forwardedClient(_ header: String?) -> String? {
        guard let header, let last = header.split(separator: ",", omittingEmptySubsequences: false).last else { return nil }
        return ServerConfiguration.plainIPAddress(String(last.trimmingSpaces))
    }

    /// The peer's IP address, without port or reverse DNS.
    ///
    /// lws listens on an IPv6 socket even for an IPv4 interface, so IPv4 peers come back as
    /// IPv4-mapped (`::ffff:127.0.0.1`); they are reported in plain form (`127.0.0.1`) so one
    /// client always has one address for per-address limits.
    static func peerAddress(_ wsi: OpaquePointer) -> String {
        let address = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer -> String in
            // The temporary buffer is ours for this scope; lws writes a NUL-terminated string into it.
            guard let base = buffer.baseAddress, let name = lws_get_peer_simple(wsi, base, buffer.count) else {
                return ""
            }
            return String(cString: name)
        }
        return unmappingIPv4(address)
    }

    /// `::ffff:a.b.c.d` → `a.b.c.d`; anything else unchanged.
    static func unmappingIPv4(_ address: String) -> String {
        let prefix = "::ffff:"
        guard address.lowercased().hasPrefix(prefix) else { return address }
        let rest = address.dropFirst(prefix.count)
        return rest.contains(".") ? String(rest) : address
    }

    /// A request header as text, or nil if absent or `maxBytes` long or longer.
    static func header(_ wsi: OpaquePointer, _ token: lws_token_indexes, maxBytes: Int32 = 1024) -> String? {
        let length = lws_hdr_total_length(wsi, token)
        guard length > 0, length < maxBytes else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(length) + 1) { buffer -> String? in
            // Ours for this scope; lws_hdr_copy writes at most `count` bytes including the NUL.
            guard let base = buffer.baseAddress else { return nil }
            let copied = lws_hdr_copy(wsi, base, Int32(buffer.count), token)
            guard copied >= 0 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: base, count: Int(copied)), as: UTF8.self)
        }
    }
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
