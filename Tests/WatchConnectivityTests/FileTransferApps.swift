import Foundation
import Primitives
import TestSupport
import WatchConnectivity

/// A watch app that records workouts to files and sends each to the phone, written as watchOS
/// apps write it: `transferFile` with the recording's metadata, and its own copy deleted once
/// `session(_:didFinish:error:)` says the phone has it (kept for a retry on an error).
///
/// `@unchecked Sendable` only because `NSObject` is not `Sendable`: every stored property is a
/// `let` of a `Sendable` type.
final class WorkoutRecorder: NSObject, WCSessionDelegate, @unchecked Sendable {
    /// What one `didFinish` said: the recording, the `WCError` code (nil: the phone has it) and
    /// the transfer's progress then (`completed/total finished?`).
    struct Finished: Sendable, Equatable {
        var id: String
        var code: Int?
        var progress: String
    }

    let session: WCSession
    /// The watch app's temporary directory, where recordings are written.
    let folder: URL
    let activated = LockedState(false)
    let finished = LockedState<[Finished]>([])

    init(session: WCSession, folder: URL) {
        self.session = session
        self.folder = folder
        super.init()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        session.delegate = self
    }

    /// Writes recording `id`: `bytes` pseudo-random bytes, as the sensors gave them.
    func record(_ id: String, bytes: Int) throws -> (url: URL, data: Data) {
        let data = Self.samples(bytes, seed: UInt64(bytes) &* 31 &+ UInt64(id.utf8.count))
        let url = folder.appendingPathComponent("\(id).workout")
        try data.write(to: url)
        return (url, data)
    }

    /// `count` pseudo-random bytes, fixed by `seed` (eight at a time: megabytes stay quick in a
    /// debug build).
    static func samples(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        var data = Data(capacity: count + 8)
        while data.count < count {
            withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) }
        }
        data.count = count
        return data
    }

    /// Sends recording `id` with its metadata (`extra` adds to it).
    @discardableResult
    func send(_ url: URL, id: String, takenAt: Date, extra: [String: Any] = [:]) -> WCSessionFileTransfer {
        var metadata: [String: Any] = ["recordingID": id, "takenAt": takenAt, "kind": "workout"]
        metadata.merge(extra) { $1 }
        return session.transferFile(url, metadata: metadata)
    }

    /// The recordings `didFinish` reported, in order.
    var finishedIDs: [String] { finished.withLock { $0.map(\.id) } }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        activated.withLock { $0 = activationState == .activated }
    }

    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        let id = fileTransfer.file.metadata?["recordingID"] as? String ?? "?"
        let progress = fileTransfer.progress
        let seen = "\(progress.completedUnitCount)/\(progress.totalUnitCount) \(progress.isFinished)"
        finished.withLock { $0.append(Finished(id: id, code: (error as? WCError)?.code.rawValue, progress: seen)) }
        if error == nil { try? FileManager.default.removeItem(at: fileTransfer.file.fileURL) }
    }
}

/// The phone app's side: keeps each recording in its Documents folder, moved during the
/// delegate call as Apple requires ("If you don't move the file, the system deletes it after
/// this method returns"), and logs the watch's notes (userInfo), everything in the order heard.
///
/// `@unchecked Sendable` as ``WorkoutRecorder``.
final class RecordingLibrary: NSObject, WCSessionDelegate, @unchecked Sendable {
    let documents: URL
    let activated = LockedState(false)
    /// `file <id>` or `note <n>`, in the order the delegate heard them.
    let arrivals = LockedState<[String]>([])
    /// Each recording's `takenAt` and the number of its `heartRates`, from its metadata.
    let takenAt = LockedState<[String: Date]>([:])
    let heartRates = LockedState<[String: Int]>([:])
    /// Files that could not be moved, with why.
    let problems = LockedState<[String]>([])

    init(session: WCSession, documents: URL) {
        self.documents = documents
        super.init()
        try? FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        session.delegate = self
    }

    /// Recording `id` as the library keeps it.
    func stored(_ id: String) -> Data? {
        try? Data(contentsOf: documents.appendingPathComponent("\(id).workout"))
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        activated.withLock { $0 = activationState == .activated }
    }

    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let id = file.metadata?["recordingID"] as? String ?? file.fileURL.deletingPathExtension().lastPathComponent
        let destination = documents.appendingPathComponent("\(id).workout")
        do {
            if FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.removeItem(at: destination)
            }
            try FileManager.default.moveItem(at: file.fileURL, to: destination)
        } catch {
            problems.withLock { $0.append("\(id): \(error)") }
        }
        if let date = file.metadata?["takenAt"] as? Date { takenAt.withLock { $0[id] = date } }
        if let rates = file.metadata?["heartRates"] as? [Any] { heartRates.withLock { $0[id] = rates.count } }
        arrivals.withLock { $0.append("file \(id)") }
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {
        arrivals.withLock { $0.append("note \(userInfo["note"] ?? "?")") }
    }
}

extension WCHarness {
    /// The two apps on this harness's sessions, launched as each app launches (delegate set,
    /// `activate()`); the phone's only if `phoneRunning` (else ``launch(_:)`` it later).
    func apps(phoneRunning: Bool = true) async throws -> (watch: WorkoutRecorder, phone: RecordingLibrary) {
        let recorder = WorkoutRecorder(session: watch, folder: URL(fileURLWithPath: directory.path("watch-tmp")))
        let library = RecordingLibrary(session: phone, documents: URL(fileURLWithPath: directory.path("Documents")))
        try await launch(recorder)
        if phoneRunning { try await launch(library) }
        return (recorder, library)
    }

    /// Activates the watch app's session and waits for activation.
    func launch(_ recorder: WorkoutRecorder) async throws {
        recorder.session.activate()
        try await eventually(10, "the watch app's activation") { recorder.activated.withLock { $0 } }
    }

    /// Activates the phone app's session and waits for activation.
    func launch(_ library: RecordingLibrary) async throws {
        phone.activate()
        try await eventually(10, "the phone app's activation") { library.activated.withLock { $0 } }
    }
}
