import Foundation
import RelayClient
import RelayProtocol

/// Pairs a phone's and a watch's state directories through the relay (WatchRelay addition).
///
/// On a real device pairing is the operating system's job, done before the app runs; here it
/// is this setup step (`watchrelay pair`). Apps started with `WATCHRELAY_STATE` set to these
/// directories find themselves paired at `activate()`. Pairing again makes a new pair (the
/// relay revokes the old one).
public enum WatchRelayPairing {
    /// What a pairing produced.
    public struct Result: Sendable, Hashable {
        /// The relay's pair id.
        public var pairID: String
        /// The device names each side sees for its counterpart.
        public var phoneName: String
        public var watchName: String
    }

    /// Connects as the phone and as the watch, pairs them by code, and closes both.
    ///
    /// - Throws: the relay session's error (the relay is unreachable, the code was refused) or
    ///   a `CocoaError` when a state directory can't be created.
    public static func pair(
        relayURL: String, phoneState: String, watchState: String, phoneName: String = "iPhone",
        watchName: String = "Apple Watch", requestTimeoutSeconds: Double = 10
    ) async throws -> Result {
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relayURL, role: .phone, deviceName: phoneName, stateDirectory: phoneState,
                requestTimeoutSeconds: requestTimeoutSeconds))
        let watch = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relayURL, role: .watch, deviceName: watchName, stateDirectory: watchState,
                requestTimeoutSeconds: requestTimeoutSeconds))
        do {
            try await phone.activate()
            try await watch.activate()
            let code = try await phone.beginPairing()
            try await watch.pair(code: code.code)
            // The phone learns of the pair by a `paired` frame of its own.
            let pairID = await firstPairing(of: phone, within: requestTimeoutSeconds)
            await phone.close()
            await watch.close()
            guard let pairID else { throw RelaySessionError.timeout("the phone's paired frame") }
            return Result(pairID: pairID, phoneName: phoneName, watchName: watchName)
        } catch {
            await phone.close()
            await watch.close()
            throw error
        }
    }

    private static func firstPairing(of session: RelaySession, within seconds: Double) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await event in session.events {
                    if case .paired(let pairID, _) = event { return pairID }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
