import WebSocketTransport

/// The base URL the fixture server names in its answers: `Link` targets, the root's URLs, and
/// the API URLs in the user and repository objects.
extension GitHubStub {
    /// The API root the fixture files name, as GitHub's own objects do
    /// (`"url": "https://api.github.com/users/octocat"`).
    static let fixtureAPIRoot = "https://api.github.com"
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

    /// `body` (compact JSON, as `JSONWriter` writes it) with ``fixtureAPIRoot`` at the start of
    /// a string value, alone or before a `/`, replaced by `base`.
    ///
    /// GitHub's objects name the API host the client used (`url`, `repos_url`, `followers_url`, …);
    /// the fixture files name the real one, so a client following `repos_url` from the offline
    /// fixture server went to the internet. Only a value that starts with the root changes (a
    /// string starts after `:`, `,` or `[`; text that mentions the URL later is left alone), and
    /// `base` is `http://` and a checked `host[:port]`, with nothing to escape.
    static func rebased(_ body: [UInt8], to base: String) -> [UInt8] {
        guard base != fixtureAPIRoot else { return body }
        let root = Array("\"\(fixtureAPIRoot)".utf8)
        let replacement = Array("\"\(base)".utf8)
        // What precedes a string value's opening quote in compact JSON.
        let valueOpeners: [UInt8] = [UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "[")]
        var result: [UInt8] = []
        result.reserveCapacity(body.count + body.count / 8)
        var index = 0
        while index < body.count {
            let end = index + root.count
            if body[index] == UInt8(ascii: "\""), index > 0, valueOpeners.contains(body[index - 1]), end < body.count,
                body[end] == UInt8(ascii: "/") || body[end] == UInt8(ascii: "\""), body[index..<end].elementsEqual(root)
            {
                result.append(contentsOf: replacement)
                index = end
            } else {
                result.append(body[index])
                index += 1
            }
        }
        return result
    }
}
