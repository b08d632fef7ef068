import Foundation
import RelayClient
import RelayProtocol

extension WCSession {
    /// `<state>/WatchConnectivity`: the chunks of files on their way in (`Partial/<file id>/`)
    /// and the temporary inbox a delegate sees (`Inbox/<file id>/<name>`).
    private var fileRoot: URL? {
        environment.map { URL(fileURLWithPath: $0.stateDirectory).appendingPathComponent("WatchConnectivity") }
    }

    /// Receiver: stores a chunk durably, then acknowledges it; with the last one, assembles
    /// the file in the inbox, hands it to `session(_:didReceive:)`, deletes the inbox when the
    /// method returns, and only then acknowledges the last chunk.
    func receiveFileChunk(_ delivery: Delivery, relay: RelaySession, outbox: SessionOutbox) async {
        let m = delivery.payload.members
        guard let root = fileRoot, let fileID = m["fid"]?.stringValue, Self.isSafeName(fileID),
            let index = m["index"]?.intValue, let count = m["count"]?.intValue, index >= 0, index < count,
            let data = m["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
        else {
            // Not a chunk this version understands: drop it rather than block the queue.
            await relay.acknowledge(delivery)
            return
        }
        let tid = m["tid"]?.stringValue ?? "\(fileID):\(index)"
        if (try? outbox.wasReceived(tid)) == true {
            await relay.acknowledge(delivery)
            return
        }
        let partial = root.appendingPathComponent("Partial/\(fileID)")
        do {
            try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true)
            try data.write(to: partial.appendingPathComponent("\(index)"), options: .atomic)
            if let metadata = m["metadata"] {
                let payload = Payload(kind: PropertyListPayload.Channel.userInfo.rawValue, ["dict": metadata])
                try Data(payload.bytes).write(to: partial.appendingPathComponent("metadata"), options: .atomic)
            }
        } catch {
            // The chunk is not stored: it stays unacknowledged and comes again after a reconnect.
            return
        }
        let complete = (0..<count).allSatisfy {
            FileManager.default.fileExists(atPath: partial.appendingPathComponent("\($0)").path)
        }
        if complete {
            let name = m["name"]?.stringValue.flatMap { Self.isSafeName($0) ? $0 : nil } ?? "file"
            // The session stopped while waiting for a delegate: the last chunk comes again.
            guard await deliverFile(fileID, name: name, chunks: Int(count), from: partial, root: root) else { return }
        }
        try? outbox.markReceived(tid)
        if complete { try? FileManager.default.removeItem(at: partial) }
        await relay.acknowledge(delivery)
    }

    /// False when the session stopped before a delegate was set (nothing delivered).
    private func deliverFile(_ fileID: String, name: String, chunks: Int, from partial: URL, root: URL) async -> Bool {
        let inbox = root.appendingPathComponent("Inbox/\(fileID)")
        let fileURL = inbox.appendingPathComponent(name)
        do {
            try? FileManager.default.removeItem(at: inbox)
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            var whole = Data()
            for index in 0..<chunks { whole.append(try Data(contentsOf: partial.appendingPathComponent("\(index)"))) }
            try whole.write(to: fileURL)
        } catch {
            return true
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
        guard delivered else { return false }
        noteProgress()
        // "The system will remove any content that has not been moved when this delegate method returns."
        try? FileManager.default.removeItem(at: inbox)
        return true
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
