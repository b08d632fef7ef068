import RelayCore
import RelayStore

extension RelayEnvironment {
    /// Cryptographic randomness (the system generator: getrandom on Linux) and SHA-256 token hashes.
    public static let live = RelayEnvironment(
        pairingCode: {
            var rng = SystemRandomNumberGenerator()
            let n = Int.random(in: 0..<1_000_000, using: &rng)
            let s = String(n)
            return String(repeating: "0", count: 6 - s.count) + s
        },
        token: { base64URL(randomBytes(32)) },
        identifier: { prefix in
            prefix + "_" + randomBytes(12).map { byte in
                let s = String(byte, radix: 16)
                return s.count == 1 ? "0" + s : s
            }.joined()
        },
        hashToken: { TokenHasher.sha256Hex($0) })

    static func randomBytes(_ n: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Base64url without padding (RFC 4648 §5): 32 bytes → 43 characters.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var i = 0
        while i + 2 < bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)], alphabet[Int(v & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = UInt32(bytes[i]) << 16
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)]]
        } else if rest == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(v >> 18 & 63)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
