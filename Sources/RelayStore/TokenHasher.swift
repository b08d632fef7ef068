import CCrypto

/// Hashes device tokens for storage, so the database never holds a usable token.
public enum TokenHasher {
    /// The lowercase hex SHA-256 digest of the UTF-8 bytes of `token`.
    ///
    /// `sha256Hex("abc")` is `ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad`.
    public static func sha256Hex(_ token: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let text = Array(token.utf8)
        // A C call takes pointers: Swift lends both arrays for its duration (none is spelled
        // or kept here). libcrypto reads `text.count` bytes of `text` and writes `digest`,
        // exactly 32 bytes as relay_sha256 requires.
        let ok = unsafe relay_sha256(text, text.count, &digest)
        // SHA256_Init/Update/Final on a context on the stack do not fail for valid arguments; if
        // they ever did, no caller could handle it, and a hash that silently differs would lock
        // devices out.
        precondition(ok == 1, "libcrypto SHA-256 failed")
        return hex(digest)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
