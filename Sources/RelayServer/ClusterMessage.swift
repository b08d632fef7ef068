/// What relay nodes of one cluster say to each other over Redis pub/sub (channel
/// `wr:node:NODE`, or `wr:DB:node:NODE` on database DB ≠ 0, one per node): the client connections an edge node forwards to the leader,
/// and what the leader sends back on them.
///
/// A connection is named `EDGE:N` (the edge node's id and its own connection number), so the
/// leader knows which channel to answer on. The encoding is a header line and a body, so a
/// frame travels as the client's bytes, unescaped:
///
/// | Direction | Header | Body |
/// | --- | --- | --- |
/// | edge → leader | `open EDGE:N` | the client's IP address |
/// | edge → leader | `text EDGE:N` | the client's frame |
/// | edge → leader | `binary EDGE:N` | — |
/// | edge → leader | `large EDGE:N SIZE` | — |
/// | edge → leader | `gone EDGE:N` | — (the client's socket closed, or the edge closed it) |
/// | leader → edge | `send EDGE:N` | the relay's frame |
/// | leader → edge | `close EDGE:N CODE` | the close reason |
enum ClusterMessage: Hashable, Sendable {
    case opened(connection: String, address: String)
    case clientText(connection: String, [UInt8])
    case clientBinary(connection: String)
    case clientTooLarge(connection: String, size: Int)
    case clientGone(connection: String)
    case send(connection: String, [UInt8])
    case close(connection: String, code: UInt16, reason: String)

    /// The connection it is about.
    var connection: String {
        switch self {
        case .opened(let c, _), .clientText(let c, _), .clientBinary(let c), .clientTooLarge(let c, _), .clientGone(let c),
            .send(let c, _), .close(let c, _, _):
            c
        }
    }

    /// Whether an edge sends it to the leader (else the leader sends it to an edge).
    var isForLeader: Bool {
        switch self {
        case .opened, .clientText, .clientBinary, .clientTooLarge, .clientGone: true
        case .send, .close: false
        }
    }

    /// The header line, a newline, the body.
    var encoded: [UInt8] {
        let (header, body): (String, [UInt8]) =
            switch self {
            case .opened(let c, let address): ("open \(c)", Array(address.utf8))
            case .clientText(let c, let bytes): ("text \(c)", bytes)
            case .clientBinary(let c): ("binary \(c)", [])
            case .clientTooLarge(let c, let size): ("large \(c) \(size)", [])
            case .clientGone(let c): ("gone \(c)", [])
            case .send(let c, let bytes): ("send \(c)", bytes)
            case .close(let c, let code, let reason): ("close \(c) \(code)", Array(reason.utf8))
            }
        var out = Array(header.utf8)
        out.reserveCapacity(out.count + 1 + body.count)
        out.append(10)
        out.append(contentsOf: body)
        return out
    }

    /// Parses ``encoded``; nil for anything else (a message this version does not know).
    init?(decoding bytes: [UInt8]) {
        guard let newline = bytes.firstIndex(of: 10) else { return nil }
        let header = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        let body = Array(bytes[(newline + 1)...])
        guard header.count >= 2 else { return nil }
        let c = String(header[1])
        switch (header[0], header.count) {
        case ("open", 2): self = .opened(connection: c, address: String(decoding: body, as: UTF8.self))
        case ("text", 2): self = .clientText(connection: c, body)
        case ("binary", 2): self = .clientBinary(connection: c)
        case ("large", 3):
            guard let size = Int(header[2]) else { return nil }
            self = .clientTooLarge(connection: c, size: size)
        case ("gone", 2): self = .clientGone(connection: c)
        case ("send", 2): self = .send(connection: c, body)
        case ("close", 3):
            guard let code = UInt16(header[2]) else { return nil }
            self = .close(connection: c, code: code, reason: String(decoding: body, as: UTF8.self))
        default: return nil
        }
    }

    /// The channel of `node` in a cluster on `database`: `wr:node:NODE` on 0, `wr:DB:node:NODE`
    /// on another (Redis pub/sub ignores databases: two clusters on one Redis, each on its own
    /// database, would otherwise hear each other's nodes of the same id).
    static func channel(of node: String, database: Int) -> String {
        database == 0 ? "wr:node:" + node : "wr:\(database):node:" + node
    }

    /// The edge node named in a connection `EDGE:N`, or nil.
    static func edge(of connection: String) -> String? {
        connection.lastIndex(of: ":").map { String(connection[..<$0]) }
    }
}
