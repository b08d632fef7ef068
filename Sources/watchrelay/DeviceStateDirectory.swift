#if os(Linux)
import Foundation
import PhoneApp
import RelayClient
import RelayProtocol
import WatchApp
import WatchConnectivity

/// Whose a state directory is, from what is in it, for the commands that take a phone's and a
/// watch's directories (`pair`, `switch-watch`) and must not write one role's state into the
/// other's.
enum DeviceStateDirectory {
    /// The role whose state `directory` holds: its session's recorded role, else the apps' own
    /// files (the phone's `phone.db`, watches and active watch; the watch's `watch.db`); nil for
    /// a missing or empty directory, or a session made before roles were recorded and nothing else.
    static func role(of directory: String) -> Role? {
        if let role = SQLiteSessionStore.role(inDirectory: HeadlessWatch.sessionDirectory(of: directory)) { return role }
        let fm = FileManager.default
        let phoneFiles = [PhoneStore.fileName, PhoneWatches.activeFileName, "watches"]
        if phoneFiles.contains(where: { fm.fileExists(atPath: directory + "/" + $0) }) { return .phone }
        if fm.fileExists(atPath: directory + "/" + HeadlessWatch.storeFileName) { return .watch }
        return nil
    }

    /// Throws when `directory`, given as `option` for a `role`'s state, holds the other role's.
    static func require(_ directory: String, option: String, holds expected: Role) throws {
        guard let found = role(of: directory), found != expected else { return }
        throw WrongDeviceState(directory: directory, option: option, found: found, expected: expected)
    }
}

/// A state directory given for one role that holds the other's.
struct WrongDeviceState: Error, CustomStringConvertible {
    let directory: String
    let option: String
    let found: Role
    let expected: Role

    var description: String {
        "\(option) \(directory) is a \(found)'s state directory, not a \(expected)'s: pass the \(expected)'s"
            + "; nothing was written"
    }
}
#endif
