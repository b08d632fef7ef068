import Foundation
import RelayClient

/// Where a phone's state directory keeps each of its watches (WatchRelay addition).
///
/// On iOS one phone may be paired with several watches, one of them active; the system keeps
/// each watch's data apart. Here each watch is a relay pair of its own (PROTOCOL.md §6.5), and
/// the phone holds one device state — token, queued transfers, `WatchDirectory` — per watch:
///
/// | Path under the phone's state | What |
/// | --- | --- |
/// | `.` | the watch paired without a watch id (`default`): the single-watch layout, unchanged |
/// | `watches/<id>/` | the watch paired with `watchrelay pair --watch-id <id>` |
/// | `active-watch` | the active watch's id; absent means `default` |
///
/// A `WCSession` on the phone talks to the active watch only; ``WCSession/switchWatch(to:)``
/// changes it in Apple's order (inactive, deactivated, activate again).
public struct PhoneWatches: Sendable, Hashable {
    /// The id of the watch kept at the top of the phone's state directory.
    public static let defaultID = PhoneIdentities.defaultID

    /// The phone's state directory.
    public var root: String

    /// The file under ``root`` naming the active watch.
    public static let activeFileName = "active-watch"

    /// The watches of the phone whose state directory is `root`.
    public init(root: String) { self.root = root }

    /// Whether `id` can name a watch: 1–64 of `A–Z a–z 0–9 . _ -`, not `.` or `..`.
    public static func isValid(_ id: String) -> Bool { PhoneIdentities.isValid(id) }

    /// The device state directory of watch `id` (the root itself for ``defaultID``).
    public func directory(of id: String) -> String { PhoneIdentities.directory(of: id, root: root) }

    /// The active watch's id (``defaultID`` when none was chosen).
    public var activeID: String {
        guard let data = FileManager.default.contents(atPath: root + "/" + Self.activeFileName) else { return Self.defaultID }
        let id = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Self.isValid(id) ? id : Self.defaultID
    }

    /// Makes `id` the active watch (written atomically, so a reader sees the old or the new id).
    ///
    /// - Throws: `CocoaError` when the file can't be written.
    public func setActive(_ id: String) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data((id + "\n").utf8).write(to: URL(fileURLWithPath: root + "/" + Self.activeFileName), options: .atomic)
    }

    /// The ids of the watches that have a state directory, ``defaultID`` first when the root
    /// holds one (a relay session store).
    public var ids: [String] { PhoneIdentities.ids(root: root) }
}
