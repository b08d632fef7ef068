import Foundation

/// A phone's device identities, one per watch (PROTOCOL.md §6.5), as its state directory keeps
/// them: the watch paired without a watch id at the top (`default`), every other one in
/// `watches/<id>/`, each a ``RelaySession`` state of its own (token, `lastSeq`, queued sends).
///
/// WatchConnectivity's `PhoneWatches` and the phone companion (`PhoneConfiguration.watchID`)
/// read the same layout; an iPhone app uninstalled is uninstalled for every watch of the phone
/// (``uninstallApp(root:except:configuration:)``).
public enum PhoneIdentities {
    /// The id of the watch kept at the top of the phone's state directory.
    public static let defaultID = "default"

    /// Whether `id` can name a watch: 1–64 of `A–Z a–z 0–9 . _ -`, not `.` or `..`.
    public static func isValid(_ id: String) -> Bool {
        guard (1...64).contains(id.count), id != ".", id != ".." else { return false }
        return id.unicodeScalars.allSatisfy { s in
            s.isASCII && (CharacterSet.alphanumerics.contains(s) || s == "." || s == "_" || s == "-")
        }
    }

    /// The session state directory of watch `id` under the phone's state directory `root`
    /// (`root` itself for ``defaultID``).
    public static func directory(of id: String, root: String) -> String {
        id == defaultID ? root : root + "/watches/" + id
    }

    /// The ids of the watches that have a state directory under `root`, ``defaultID`` first
    /// when `root` holds one (a relay session store).
    public static func ids(root: String) -> [String] {
        let fm = FileManager.default
        var ids: [String] = []
        let rootPaired = (try? fm.contentsOfDirectory(atPath: root))?.contains { $0.hasPrefix("session.db") } ?? false
        if rootPaired { ids.append(defaultID) }
        let others = (try? fm.contentsOfDirectory(atPath: root + "/watches")) ?? []
        ids += others.filter(isValid).sorted()
        return ids
    }

    /// Says the iPhone app was uninstalled for every watch of the phone whose state directory
    /// is `root` but the one whose session state is `activeDirectory` (the caller's session
    /// says it for that one): connects as each identity in turn, `hello` with its token, then
    /// `state` `{appInstalled: false}`, then the close (``RelaySession/uninstallApp()``); each
    /// watch then sees the companion app uninstalled until the phone's next `hello` as that
    /// identity (PROTOCOL.md §7.1). One after another, each within `configuration`'s request
    /// timeout (its `stateDirectory` is replaced by each identity's).
    /// - Returns: the ids of the watches the relay was not told of (it did not answer, or a
    ///   state could not be opened); a watch whose identity is not paired has nothing to be told.
    public static func uninstallApp(
        root: String, except activeDirectory: String?, configuration: RelaySessionConfiguration
    ) async -> [String] {
        var notTold: [String] = []
        for id in ids(root: root) {
            let directory = directory(of: id, root: root)
            guard directory != activeDirectory else { continue }
            var identity = configuration
            identity.stateDirectory = directory
            if await !sayUninstalled(identity) { notTold.append(id) }
        }
        return notTold
    }

    /// Connects as the device whose state is `configuration.stateDirectory` just long enough to
    /// say its app was uninstalled; returns whether the relay was told (true when the state
    /// holds no pair: no peer could see the app).
    private static func sayUninstalled(_ configuration: RelaySessionConfiguration) async -> Bool {
        guard let session = try? RelaySession(configuration: configuration) else { return false }
        guard await session.isPaired else {
            await session.close()
            return true
        }
        do {
            try await session.activate()
        } catch {
            await session.close()
            return false
        }
        return await session.uninstallApp()
    }
}
