import Foundation
import Primitives
import RelayClient
import RelayProtocol

/// Pairs a phone's and a watch's state directories through the relay (WatchRelay addition).
///
/// On a real device pairing is the operating system's job, done before the app runs; here it
/// is this setup step (`watchrelay pair`). Apps started with `WATCHRELAY_STATE` set to these
/// directories find themselves paired at `activate()`. Pairing again makes a new pair (the
/// relay revokes the old one) — unless a `watchID` names another watch of the phone: then the
/// phone keeps its watches and adds this one (``PhoneWatches``, PROTOCOL.md §6.5).
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
    /// - Parameters:
    ///   - watchID: the watch's id among the phone's watches (``PhoneWatches``); `nil` or
    ///     ``PhoneWatches/defaultID`` pairs the phone's top-level state, as with one watch. The
    ///     phone's state for another id is `phoneState/watches/<id>`, so pairing it leaves the
    ///     phone's other watches paired.
    ///   - requestTimeoutSeconds: how long each step waits for the relay; by default the
    ///     sessions' own default (10 s, or `WATCHRELAY_REQUEST_TIMEOUT_S`).
    ///   - makeActive: make this watch the phone's active one. A phone with no paired watch yet
    ///     makes its first one active anyway.
    /// - Throws: the relay session's error (the relay is unreachable, the code was refused),
    ///   `WCError.invalidParameter` for a malformed `watchID`, or a `CocoaError` when a state
    ///   directory can't be created. When the pairing itself fails, the session stores and
    ///   directories it created are removed (a device that was paired keeps its store); one
    ///   that failed after the relay had paired the two (the phone's `paired` frame never came)
    ///   leaves that pair without tokens on either side: pair again.
    public static func pair(
        relayURL: String, phoneState: String, watchState: String, phoneName: String = "iPhone",
        watchName: String = "Apple Watch",
        requestTimeoutSeconds: Double = RelaySessionConfiguration.requestTimeout(), watchID: String? = nil,
        makeActive: Bool = false
    ) async throws -> Result {
        let watches = PhoneWatches(root: phoneState)
        let id = watchID ?? PhoneWatches.defaultID
        guard PhoneWatches.isValid(id) else {
            throw WCError(.invalidParameter, userInfo: [NSLocalizedDescriptionKey: "'\(id)' is not a watch id."])
        }
        let first = watches.ids.isEmpty
        let phoneDirectory = watches.directory(of: id)
        let created = NewState(directories: [phoneDirectory, watchState])
        let key = UUID()
        unfinished.withLock { $0[key] = created }
        let result: Result
        do {
            result = try await pairDirectories(
                relayURL: relayURL, phoneState: phoneDirectory, watchState: watchState, phoneName: phoneName,
                watchName: watchName, requestTimeoutSeconds: requestTimeoutSeconds)
        } catch {
            // An unpaired store left behind would count as a watch (PhoneWatches.ids): the next
            // pairing would not make its watch active, and `switch-watch` would list this one.
            created.remove()
            unfinished.withLock { _ = $0.removeValue(forKey: key) }
            throw error
        }
        unfinished.withLock { _ = $0.removeValue(forKey: key) }
        if makeActive || (first && id != PhoneWatches.defaultID) { try watches.setActive(id) }
        return result
    }

    /// What the pairings under way created, each removed as its failure would remove it.
    private static let unfinished = LockedState<[UUID: NewState]>([:])

    /// Removes what the pairings still under way created (their session stores and the
    /// directories made for them), as their failure would: for a process that a signal stops
    /// mid-pairing (`watchrelay pair` waits up to the request timeout for a relay that does not
    /// answer), which does not wait for them to fail. Returns how many it undid.
    @discardableResult
    public static func removeUnfinished() -> Int {
        let states = unfinished.withLock { states in
            defer { states = [:] }
            return Array(states.values)
        }
        for state in states { state.remove() }
        return states.count
    }

    /// What a pairing is about to create: the session stores (with their SQLite side files)
    /// and the directories that do not exist yet, so that a failed pairing leaves the state
    /// directories as it found them. Anything that was there is kept: a store (a paired device
    /// pairing again), a side file, a symbolic link, even a dangling one. Paths are kept as
    /// given (made absolute, not standardized), so `..` after a symbolic link resolves as the
    /// session's own file operations resolve it.
    private struct NewState: Sendable {
        var files: [String] = []
        var directories: [String] = []

        init(directories roots: [String]) {
            let fm = FileManager.default
            for root in roots {
                let directory = URL(fileURLWithPath: root)
                for suffix in ["", "-wal", "-shm", "-journal"] where !Self.entryExists(directory.path + "/session.db" + suffix) {
                    files.append(directory.path + "/session.db" + suffix)
                }
                var missing = directory
                while !fm.fileExists(atPath: missing.path), missing.path != "/" {
                    directories.append(missing.path)
                    missing = missing.deletingLastPathComponent()
                }
            }
        }

        /// Whether `path` names anything, a symbolic link included (not followed).
        private static func entryExists(_ path: String) -> Bool {
            (try? FileManager.default.attributesOfItem(atPath: path)) != nil
        }

        /// Removes the files, then the directories created for them that are empty, deepest
        /// first.
        func remove() {
            let fm = FileManager.default
            for file in files { try? fm.removeItem(atPath: file) }
            for directory in directories.sorted(by: { $0.count > $1.count })
            where (try? fm.contentsOfDirectory(atPath: directory))?.isEmpty == true {
                try? fm.removeItem(atPath: directory)
            }
        }
    }

    private static func pairDirectories(
        relayURL: String, phoneState: String, watchState: String, phoneName: String, watchName: String,
        requestTimeoutSeconds: Double
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
