import Foundation
import RelayClient
import RelayProtocol

extension WCSession {
    /// `<state>/WatchConnectivity`: the chunks of files on their way in (`Partial/<file id>/`)
    /// and the temporary inbox a delegate sees (`Inbox/<file id>/<name>`).
    private var fileRoot: URL? {
        environment.map { URL(fileURLWithPath: $0.stateDirectory).appendingPathComponent("WatchConnectivity") }
    }

    /// What became of a file chunk the receiver handled.
    private enum ChunkOutcome {
        /// Stored (and with the last one, the file handed to the delegate): acknowledge it.
        case handled
        /// The session stopped while waiting for a delegate: nothing delivered, the chunk
        /// comes again at the next launch.
        case stopped
        /// It could not be stored, or the file not assembled (a full disk, a file where a
        /// directory must be): nothing marked, the chunks kept.
        case failed
    }

    /// The pauses before each new try of a chunk that failed; after the last try, its delivery
    /// is released.
    private static let chunkRetryPauses: [Duration] = [.milliseconds(200), .seconds(1)]

    /// Receiver: stores a chunk durably, then acknowledges it; with the last one, assembles
    /// the file in the inbox, hands it to `session(_:didReceive:)`, deletes the inbox when the
    /// method returns, and only then acknowledges the last chunk. A chunk that can't be stored
    /// or a file that can't be assembled is tried again after a pause, then released: it is
    /// not acknowledged, and the relay delivers it again on a new connection, until the cause
    /// is gone (the sender hears nothing meanwhile, as with a phone out of storage). False
    /// when it was released.
    func receiveFileChunk(_ delivery: Delivery, relay: RelaySession, outbox: SessionOutbox) async -> Bool {
        let m = delivery.payload.members
        guard let root = fileRoot, let fileID = m["fid"]?.stringValue, Self.isSafeName(fileID),
            let index = m["index"]?.intValue, let count = m["count"]?.intValue, index >= 0, index < count,
            let data = m["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
        else {
            // Not a chunk this version understands: drop it rather than block the queue.
            await relay.acknowledge(delivery)
            return true
        }
        let tid = m["tid"]?.stringValue ?? "\(fileID):\(index)"
        if (try? outbox.wasReceived(tid)) == true {
            await relay.acknowledge(delivery)
            return true
        }
        let partial = root.appendingPathComponent("Partial/\(fileID)")
        let name = m["name"]?.stringValue.flatMap { Self.isSafeName($0) ? $0 : nil } ?? "file"
        var pauses = Self.chunkRetryPauses.makeIterator()
        while true {
            switch await storeChunk(data, index: Int(index), of: Int(count), m["metadata"], fileID, name, partial, root) {
            case .handled:
                try? outbox.markReceived(tid)
                await relay.acknowledge(delivery)
                return true
            case .stopped:
                return true
            case .failed:
                // Left unacknowledged, it would count as handled when it came again, and hold
                // every later ack below it: released, it comes again as new.
                guard let pause = pauses.next(), (try? await Task.sleep(for: pause)) != nil else {
                    await relay.release(delivery)
                    return false
                }
            }
        }
    }

    /// Stores chunk `index` in `partial`; with all `count` there, delivers the file and
    /// removes the chunks.
    private func storeChunk(
        _ data: Data, index: Int, of count: Int, _ metadata: JSONValue?, _ fileID: String, _ name: String,
        _ partial: URL, _ root: URL
    ) async -> ChunkOutcome {
        do {
            try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true)
            try data.write(to: partial.appendingPathComponent("\(index)"), options: .atomic)
            if let metadata {
                let payload = Payload(kind: PropertyListPayload.Channel.userInfo.rawValue, ["dict": metadata])
                try Data(payload.bytes).write(to: partial.appendingPathComponent("metadata"), options: .atomic)
            }
        } catch {
            return .failed
        }
        let complete = (0..<count).allSatisfy {
            FileManager.default.fileExists(atPath: partial.appendingPathComponent("\($0)").path)
        }
        guard complete else { return .handled }
        let outcome = await deliverFile(fileID, name: name, chunks: count, from: partial, root: root)
        if outcome == .handled { try? FileManager.default.removeItem(at: partial) }
        return outcome
    }

    /// Assembles the file in the inbox and hands it to the delegate. `.failed` (nothing
    /// delivered, the chunks kept) when it can't be assembled; `.stopped` when the session
    /// stopped before a delegate was set.
    private func deliverFile(_ fileID: String, name: String, chunks: Int, from partial: URL, root: URL) async -> ChunkOutcome {
        let inbox = root.appendingPathComponent("Inbox/\(fileID)")
        let fileURL = inbox.appendingPathComponent(name)
        do {
            try? FileManager.default.removeItem(at: inbox)
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            var whole = Data()
            for index in 0..<chunks { whole.append(try Data(contentsOf: partial.appendingPathComponent("\(index)"))) }
            try whole.write(to: fileURL)
        } catch {
            try? FileManager.default.removeItem(at: inbox)
            return .failed
        }
        let metadata = (try? Data(contentsOf: partial.appendingPathComponent("metadata"))).flatMap { bytes -> Payload? in
            guard case .object(let members)? = try? JSONParser.parse(Array(bytes)) else { return nil }
            return Payload(members: members)
        }
        let file = WCSessionFile(fileURL: fileURL, metadata: metadata)
        state.withLock { $0.contentPending += 1 }
        var delivered = false
        while !delivered, await waitForDelegate() {
            delivered = await withDelegate { session, delegate in delegate.session(session, didReceive: file) }
        }
        state.withLock { $0.contentPending -= 1 }
        guard delivered else { return .stopped }
        noteProgress()
        // "The system will remove any content that has not been moved when this delegate method returns."
        try? FileManager.default.removeItem(at: inbox)
        return .handled
    }

    /// Receiver: the sender cancelled a file: drop its chunks.
    func discardFile(_ delivery: Delivery, relay: RelaySession) async {
        if let root = fileRoot, let fileID = delivery.payload.members["fid"]?.stringValue, Self.isSafeName(fileID) {
            try? FileManager.default.removeItem(at: root.appendingPathComponent("Partial/\(fileID)"))
        }
        await relay.acknowledge(delivery)
    }

    /// A single path component that can't leave its directory.
    private static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && name.utf8.count <= 255
    }
}
