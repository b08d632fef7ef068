import WebSocketTransport

/// The base URL the fixture server names in its answers (`Link` targets, the root's URLs).
extension GitHubStub {
    /// The longest `Host` value taken (a DNS name is at most 253 characters, plus a port).
    static let maxHostLength = 261

    /// `http://<Host header>` when the header is a well-formed `host[:port]`, else ``baseURL``
    /// (the server's bound address): the value goes into a `Link` header, where a `>`, a quote,
    /// a space or a `;` from a hostile client would break its syntax or add links of its own.
    func linkBase(_ request: HTTPRequest) -> String {
        guard let host = request.headers["host"], Self.isValidHost(host) else { return baseURL }
        return "http://\(host)"
    }

    /// Whether `value` is `host[:port]`: a name of letters, digits, `-` and `.`, or an IPv6
    /// literal in brackets (hex digits, `:` and `.`), and a port of 1 to 5 digits up to 65535.
    static func isValidHost(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= maxHostLength else { return false }
        var rest = bytes[...]
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let literal = rest[rest.index(after: rest.startIndex)..<close]
            let inLiteral = { (byte: UInt8) in isHexDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") }
            guard !literal.isEmpty, literal.allSatisfy(inLiteral) else { return false }
            rest = rest[rest.index(after: close)...]
        } else {
            let end = rest.firstIndex(of: UInt8(ascii: ":")) ?? rest.endIndex
            let name = rest[..<end]
            let inName = { (byte: UInt8) in isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") }
            guard !name.isEmpty, name.allSatisfy(inName) else { return false }
            rest = rest[end...]
        }
        guard let colon = rest.first else { return true }
        let port = rest.dropFirst()
        guard colon == UInt8(ascii: ":"), (1...5).contains(port.count), port.allSatisfy(isDigit),
            let number = Int(String(decoding: port, as: UTF8.self)), number <= 65535
        else { return false }
        return true
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}
