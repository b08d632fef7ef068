import Primitives
import RelayCore
import RelayProtocol

/// Deterministic stand-ins for the relay's randomness: sequential pairing codes
/// ("100001", "100002", …, after any scripted ones), role-named tokens and per-prefix ids.
final class TestEnvironment: Sendable {
    private struct Counters {
        var scriptedCodes: [String] = []
        var code = 100_000
        var tokens = 0
        var ids: [String: Int] = [:]
    }

    private let counters: LockedState<Counters>

    /// `codes` are handed out first (a test forces a collision by repeating one).
    init(codes: [String] = []) {
        counters = LockedState(Counters(scriptedCodes: codes))
    }

    /// Codes to hand out before the sequence continues.
    func script(codes: [String]) {
        counters.withLock { $0.scriptedCodes += codes }
    }

    /// The environment the core gets.
    var environment: RelayEnvironment {
        RelayEnvironment(
            pairingCode: { self.nextCode() },
            token: { self.nextToken() },
            identifier: { self.nextID($0) },
            hashToken: { "sha256(\($0))" })
    }

    /// The token the `n`th pairing gives the device of `role` (the core asks for the
    /// phone's token first, then the watch's), padded to the protocol's 43 characters.
    static func token(_ role: Role, _ n: Int) -> String {
        let base = "tok-\(role.rawValue)-\(n)"
        return base + String(repeating: "_", count: max(0, 43 - base.count))
    }

    private func nextCode() -> String {
        counters.withLock { c in
            if !c.scriptedCodes.isEmpty { return c.scriptedCodes.removeFirst() }
            c.code += 1
            return String(c.code)
        }
    }

    private func nextToken() -> String {
        let n = counters.withLock { c in
            c.tokens += 1
            return c.tokens
        }
        return Self.token(n % 2 == 1 ? .phone : .watch, (n + 1) / 2)
    }

    private func nextID(_ prefix: String) -> String {
        counters.withLock { c in
            c.ids[prefix, default: 0] += 1
            return "\(prefix)-\(c.ids[prefix]!)"
        }
    }
}
