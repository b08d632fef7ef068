/// A parsed `ws://` or `wss://` URL: the parts `lws_client_connect_info` needs.
///
/// Parsed by hand (no Foundation): scheme, host (a name, IPv4, or `[IPv6]`), optional port
/// (default 80 / 443), and path with query (default `/`). User info is rejected; a fragment is
/// dropped.
struct WebSocketURL: Sendable, Equatable {
    /// The URL as given, for error messages.
    let text: String
    let isSecure: Bool
    /// The host without brackets.
    let host: String
    let port: Int
    /// The request target: path plus query, starting with `/`.
    let path: String

    init(parsing text: String) throws(TransportError) {
        self.text = text
        var rest = Substring(text)
        let lowered = text.lowercased()
        if lowered.hasPrefix("wss://") {
            isSecure = true
            rest = rest.dropFirst(6)
        } else if lowered.hasPrefix("ws://") {
            isSecure = false
            rest = rest.dropFirst(5)
        } else {
            throw .invalidURL("\(text): the scheme must be ws:// or wss://")
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        path = target.isEmpty ? "/" : (target.first == "?" ? "/" + target : String(target))
        guard !authority.contains("@") else { throw .invalidURL("\(text): user info is not supported") }

        var hostPart = authority
        var portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("\(text): unclosed [") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .invalidURL("\(text): junk after ]") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw .invalidURL("\(text): no host") }
        guard !hostPart.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            throw .invalidURL("\(text): invalid host")
        }
        host = String(hostPart)
        if let portPart {
            guard let value = Int(portPart), (1...65535).contains(value) else {
                throw .invalidURL("\(text): invalid port")
            }
            port = value
        } else {
            port = isSecure ? 443 : 80
        }
        guard !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            throw .invalidURL("\(text): invalid characters in the path")
        }
    }

    /// The `Host` header: the host (bracketed if IPv6) plus the port unless it is the default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
