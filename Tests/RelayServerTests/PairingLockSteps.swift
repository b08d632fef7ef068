import Foundation
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// Steps of the tests that an address's pairing lock (PROTOCOL.md §6.3) outlives the relay
/// process that set it: a restart of a single relay (`RestartTests`), a new cluster leader
/// (`ClusterTests`). Every client of these tests comes from 127.0.0.1: one address.
enum PairingLockSteps {
    /// How long a client waits for a frame (a forwarded frame crosses Redis twice).
    static let wait = 10 * timeoutScale

    /// Sends 20 wrong codes, five per connection (the fifth locks only its connection), each
    /// connection to the next of `urls` in turn; returns the 20th's answer, which locks the address.
    static func lockTheAddress(urls: [String], clients: WebSocketClientContext) async throws -> ErrorFrame {
        var last: ErrorFrame?
        for c in 0..<4 {
            let watch = try await TestDevice.connect(urls[c % urls.count], clients: clients, role: .watch, name: "Guess \(c)")
            try await watch.hello()
            for i in 0..<5 {
                watch.send(.pairJoin(PairJoin(id: "j\(c)-\(i)", code: "9000\(c)\(i)")))
                guard case .error(let e) = try await watch.next(wait) else { throw TestFailure("expected an error") }
                #expect(e.code == .pairingCodeInvalid, "wrong code \(5 * c + i + 1)")
                last = e
            }
            watch.connection.close()
        }
        return try #require(last)
    }

    /// Connects to the first of `urls` that welcomes a watch and tries a wrong code there;
    /// returns the answer. Tries again (a dead relay, a node that knows no leader yet) for up to
    /// `seconds`.
    static func tryAWrongCode(urls: [String], clients: WebSocketClientContext, within seconds: Double) async throws
        -> ErrorFrame
    {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            for url in urls {
                guard let watch = try? await TestDevice.connect(url, clients: clients, role: .watch, name: "Guess again"),
                    (try? await watch.hello()) != nil
                else { continue }
                watch.send(.pairJoin(PairJoin(id: "j-again", code: "900099")))
                let answer = try? await watch.next(wait)
                watch.connection.close()
                if case .error(let e)? = answer { return e }
            }
            guard ContinuousClock.now < deadline else { throw TestFailure("no relay answered a pair.join") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The `TIME` of "pair.join is locked until TIME (…)" in a lock's message.
    static func lockedUntil(_ message: String) -> Substring? {
        guard let start = message.range(of: "locked until ")?.upperBound,
            let end = message[start...].range(of: " (")?.lowerBound
        else { return nil }
        return message[start..<end]
    }

    /// Checks that `answer` (after the restart or takeover) is the lock `locking` set: the
    /// address is refused until the same time.
    static func expectSameLock(_ answer: ErrorFrame, as locking: ErrorFrame, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(locking.message.contains("every connection from it is locked"), sourceLocation: sourceLocation)
        #expect(answer.code == .pairingLocked, "\(answer.message)", sourceLocation: sourceLocation)
        #expect(answer.message.hasPrefix("too many wrong codes from this address"), sourceLocation: sourceLocation)
        #expect(lockedUntil(answer.message) != nil, sourceLocation: sourceLocation)
        #expect(lockedUntil(answer.message) == lockedUntil(locking.message), sourceLocation: sourceLocation)
    }
}
