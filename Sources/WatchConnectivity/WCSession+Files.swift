import Foundation
import RelayClient
import RelayProtocol

extension WCSession {
    /// Raw bytes per chunk: base64 (4/3) plus the envelope stays under userInfo's 64 KiB.
    static let fileChunkBytes = 45_000
    /// The largest file `transferFile` takes (WatchConnectivity documents none): 8 MiB.
    public static let fileSizeLimit = 8 << 20

    /// Queues `file` for the counterpart, even after this app exits; failures and completion
    /// come through `session(_:didFinish:error:)`.
    ///
    /// The file is read and stored on the device before the call returns (moving or deleting it
    /// afterwards changes nothing), then carried by the relay in chunks as durable userInfo
    /// items (PROTOCOL.md §12.6). `progress` counts the bytes the counterpart received.
    /// Errors: `fileAccessDenied` (unreadable), `payloadTooLarge` (over ``fileSizeLimit``),
    /// `payloadUnsupportedTypes` (metadata), `sessionNotActivated`, `deviceNotPaired`.
    @discardableResult
    public func transferFile(_ file: URL, metadata: [String: Any]?) -> WCSessionFileTransfer {
        let id = Self.newID()
        var metadataPayload: Payload?
        var size: Int64 = 0
        do {
            metadataPayload = try metadata.map { try PropertyListPayload.encode($0, channel: .userInfo) }
            let (outbox, _) = try readyForDurableSend(\.userInfoBytes)
            guard let data = try? Data(contentsOf: file) else {
                throw WCError(.fileAccessDenied, userInfo: [NSLocalizedDescriptionKey: "Cannot read \(file.path)."])
            }
            size = Int64(data.count)
            guard data.count <= Self.fileSizeLimit else {
                throw WCError(
                    .payloadTooLarge,
                    userInfo: [NSLocalizedDescriptionKey: "The file is \(data.count) bytes; the limit is \(Self.fileSizeLimit)."])
            }
            let chunks = Self.chunks(of: data, id: id, name: file.lastPathComponent, metadata: metadataPayload)
            let record = SessionOutbox.FileRecord(
                id: id, url: file.absoluteString, metadata: metadataPayload, size: size, chunks: chunks.count)
            let transfer = WCSessionFileTransfer(
                id: id, file: WCSessionFile(fileURL: file, metadata: metadataPayload), totalBytes: size, session: self)
            do {
                try outbox.enqueueFile(record, chunks: chunks)
            } catch {
                throw WCError(.insufficientSpace, userInfo: [NSLocalizedDescriptionKey: "Cannot store the file: \(error)"])
            }
            state.withLock { $0.fileTransfers.append(transfer) }
            wakeDrainer()
            return transfer
        } catch {
            let transfer = WCSessionFileTransfer(
                id: id, file: WCSessionFile(fileURL: file, metadata: metadataPayload), totalBytes: size, session: self)
            let wcError = Self.wcError(error)
            delegateQueue.async {
                self.delegateOnQueue()?.session(self, didFinish: transfer, error: wcError)
            }
            return transfer
        }
    }

    /// The `wc.fileChunk` payloads of a file (at least one, for an empty file).
    private static func chunks(of data: Data, id: String, name: String, metadata: Payload?) -> [Payload] {
        let count = max(1, (data.count + fileChunkBytes - 1) / fileChunkBytes)
        return (0..<count).map { index in
            let start = index * fileChunkBytes
            let piece = data.subdata(in: start..<min(data.count, start + fileChunkBytes))
            var members: [String: JSONValue] = [
                "tid": .string("\(id):\(index)"), "fid": .string(id), "index": .int(Int64(index)),
                "count": .int(Int64(count)), "size": .int(Int64(data.count)), "name": .string(name),
                "data": .string(piece.base64EncodedString()),
            ]
            if index == 0, let metadata { members["metadata"] = metadata.members["dict"] }
            return Payload(kind: PropertyListPayload.Channel.fileChunk.rawValue, members)
        }
    }

    /// `cancel()` of a file transfer: the chunks are taken back and the receiver told to drop
    /// what it has.
    func cancel(_ transfer: WCSessionFileTransfer) {
        let removed = state.withLock { s in
            defer { s.fileTransfers.removeAll { $0 === transfer } }
            return s.fileTransfers.contains { $0 === transfer }
        }
        guard removed, let outbox = parts.withLock({ $0.outbox }) else { return }
        let notice = Payload(kind: PropertyListPayload.Channel.fileCancel.rawValue, ["fid": .string(transfer.id)])
        try? outbox.removeFile(transfer.id, cancel: true, notice: notice)
        wakeDrainer()
    }

    /// File transfers from the device's store (after a restart).
    func restoreFiles(from outbox: SessionOutbox) {
        let records = (try? outbox.files()) ?? []
        let transfers = records.map { record in
            let transfer = WCSessionFileTransfer(
                id: record.id,
                file: WCSessionFile(fileURL: URL(string: record.url) ?? URL(fileURLWithPath: "/"), metadata: record.metadata),
                totalBytes: record.size, session: self)
            let remaining =
                (try? outbox.remainingChunks(of: record.id, includingCancelled: record.finishError != nil)) ?? record.chunks
            transfer.progress.completedUnitCount = Self.bytes(received: record.chunks - remaining, of: record)
            return transfer
        }
        state.withLock { $0.fileTransfers = transfers }
    }

    private static func bytes(received chunks: Int, of record: SessionOutbox.FileRecord) -> Int64 {
        min(record.size, Int64(chunks) * Int64(fileChunkBytes))
    }

    // MARK: - Sender: chunks received or failed

    /// The counterpart received a chunk of a file (refusals: ``itemFailed(_:outbox:error:)``).
    func fileItemFinished(_ item: SessionOutbox.Item, outbox: SessionOutbox) async {
        guard let fileID = item.id.split(separator: ":").first.map(String.init),
            let transfer = state.withLock({ s in s.fileTransfers.first { $0.id == fileID } })
        else { return }
        let remaining = (try? outbox.remainingChunks(of: fileID)) ?? 0
        let total = transfer.progress.totalUnitCount
        let chunks = max(1, Int((total + Int64(Self.fileChunkBytes) - 1) / Int64(Self.fileChunkBytes)))
        transfer.progress.completedUnitCount = min(total, Int64(chunks - remaining) * Int64(Self.fileChunkBytes))
        if remaining == 0 {
            // The record goes once the delegate heard: killed before, the app hears it at launch.
            await finishFile(transfer, error: nil)
            try? outbox.removeFile(fileID, cancel: false)
        }
    }

    /// At launch: the file transfers that finished or failed while the app was killed before
    /// its delegate heard `didFinish` are reported now. Chunks the relay session no longer
    /// holds (`held`) were received by the counterpart (as for userInfo transfers).
    func finishFilesAtLaunch(outbox: SessionOutbox, heldByRelaySession held: Set<String>?) async {
        if let held { try? outbox.forgetReceivedChunks(heldByRelaySession: held) }
        for record in (try? outbox.files()) ?? [] {
            let error = record.finishError.map { WCError(WCError.Code(rawValue: $0) ?? .genericError) }
            guard error != nil || (try? outbox.remainingChunks(of: record.id)) == 0,
                let transfer = state.withLock({ s in s.fileTransfers.first { $0.id == record.id } })
            else { continue }
            if error == nil { transfer.progress.completedUnitCount = transfer.progress.totalUnitCount }
            await finishFile(transfer, error: error)
            if error == nil {
                try? outbox.removeFile(record.id, cancel: false)
            } else {
                // Its other chunks stay cancelled: the drainer still takes them back from the relay.
                try? outbox.forgetFile(record.id)
            }
        }
    }

    /// Tells the delegate, once: the event loop and the drainer may both see a file's last
    /// chunk finish, and only the one that takes the transfer out calls `didFinish`.
    func finishFile(_ transfer: WCSessionFileTransfer, error: WCError?) async {
        let isOutstanding = state.withLock { s in
            defer { s.fileTransfers.removeAll { $0 === transfer } }
            return s.fileTransfers.contains { $0 === transfer }
        }
        guard isOutstanding else { return }
        await withDelegate { session, delegate in
            delegate.session(session, didFinish: transfer, error: error)
        }
    }
}
