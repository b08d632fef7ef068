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
    /// Errors: `fileAccessDenied` (unreadable, or a directory), `payloadTooLarge` (over
    /// ``fileSizeLimit``, or metadata larger than a userInfo may be), `payloadUnsupportedTypes`
    /// (metadata), `sessionNotActivated`, `deviceNotPaired`.
    @discardableResult
    public func transferFile(_ file: URL, metadata: [String: Any]?) -> WCSessionFileTransfer {
        let id = Self.newID()
        var metadataPayload: Payload?
        var size: Int64 = 0
        do {
            metadataPayload = try metadata.map { try PropertyListPayload.encode($0, channel: .userInfo) }
            let (outbox, limit) = try readyForDurableSend(nil, \.userInfoBytes)
            // Looked at before it is read: a 2 GB video is refused without reading it on the
            // caller's thread (often the main one), and a FIFO or a device without blocking it.
            let data = try Self.readRegularFile(file)
            size = Int64(data.count)
            let chunks = Self.chunks(of: data, id: id, name: file.lastPathComponent, metadata: metadataPayload)
            // The metadata goes alone in chunk 0: a dictionary that fits a userInfo fits there.
            try Self.checkSize(chunks[0], limit: limit)
            let record = SessionOutbox.FileRecord(
                id: id, url: file.absoluteString, metadata: metadataPayload, size: size, chunks: chunks.count)
            let transfer = WCSessionFileTransfer(
                id: id, file: WCSessionFile(fileURL: file, metadata: metadataPayload), totalBytes: size,
                chunks: chunks.count, session: self)
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
                id: id, file: WCSessionFile(fileURL: file, metadata: metadataPayload), totalBytes: size, chunks: 0,
                session: self)
            let wcError = Self.wcError(error)
            delegateQueue.async {
                self.delegateOnQueue()?.session(self, didFinish: transfer, error: wcError)
            }
            return transfer
        }
    }

    /// The bytes of `file`, which must be a regular file (after symbolic links) of at most
    /// ``fileSizeLimit`` bytes; else `fileAccessDenied` or `payloadTooLarge`, unread.
    ///
    /// The file is opened once, and its type and size are looked at on that descriptor
    /// (`fstat`), not by path (`attributesOfItem` does not follow a symbolic link, and a file
    /// put in its place between a look by path and the read would be read unlooked-at).
    /// `O_NONBLOCK`: opening a FIFO does not wait for a writer. The read stops one byte past
    /// the limit, in case the file grew since it was looked at.
    private static func readRegularFile(_ file: URL) throws -> Data {
        let denied = WCError(.fileAccessDenied, userInfo: [NSLocalizedDescriptionKey: "\(file.path) is not a readable file."])
        let descriptor = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw denied }
        // The handle owns the descriptor from here and closes it when it goes.
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw denied }
        try checkFileSize(Int64(status.st_size))
        let data: Data
        do {
            data = try handle.read(upToCount: fileSizeLimit + 1) ?? Data()
        } catch {
            throw denied
        }
        try checkFileSize(Int64(data.count))
        return data
    }

    /// Throws `payloadTooLarge` for a file of more than ``fileSizeLimit`` bytes.
    private static func checkFileSize(_ size: Int64) throws {
        guard size <= Int64(fileSizeLimit) else {
            throw WCError(
                .payloadTooLarge,
                userInfo: [NSLocalizedDescriptionKey: "The file is \(size) bytes; the limit is \(fileSizeLimit)."])
        }
    }

    /// The `wc.fileChunk` payloads of a file (at least one, for an empty file). Metadata goes
    /// alone in chunk 0, before the bytes: beside a full chunk of them (60,000 in base64) it
    /// could not have been larger than about 5 KB without taking the chunk past userInfo's limit.
    private static func chunks(of data: Data, id: String, name: String, metadata: Payload?) -> [Payload] {
        let dataChunks = (data.count + fileChunkBytes - 1) / fileChunkBytes
        let leading = metadata == nil ? 0 : 1
        let count = max(1, leading + dataChunks)
        return (0..<count).map { index in
            let start = max(0, index - leading) * fileChunkBytes
            let piece = index < leading ? Data() : data.subdata(in: start..<min(data.count, start + fileChunkBytes))
            var members: [String: JSONValue] = [
                "tid": .string("\(id):\(index)"), "fid": .string(id), "index": .int(Int64(index)),
                "count": .int(Int64(count)), "size": .int(Int64(data.count)), "name": .string(name),
                "data": .string(piece.base64EncodedString()),
            ]
            if index == 0, let metadata { members["metadata"] = metadata.members["dict"] }
            return Payload(kind: PropertyListPayload.Channel.fileChunk.rawValue, members)
        }
    }

    /// The bytes of a file of `size` bytes in `chunks` chunks that the counterpart holds once it
    /// received the first `received` of them. The chunks before the bytes (metadata) carry none.
    static func bytes(received: Int, chunks: Int, size: Int64) -> Int64 {
        let dataChunks = Int((size + Int64(fileChunkBytes) - 1) / Int64(fileChunkBytes))
        let leading = max(0, chunks - dataChunks)
        return min(size, Int64(max(0, received - leading)) * Int64(fileChunkBytes))
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
                totalBytes: record.size, chunks: record.chunks, session: self)
            let remaining =
                (try? outbox.remainingChunks(of: record.id, includingCancelled: record.finishError != nil)) ?? record.chunks
            transfer.progress.completedUnitCount = Self.bytes(
                received: record.chunks - remaining, chunks: record.chunks, size: record.size)
            return transfer
        }
        state.withLock { $0.fileTransfers = transfers }
    }

    // MARK: - Sender: chunks received or failed

    /// The counterpart received a chunk of a file (refusals: ``itemFailed(_:outbox:error:)``).
    func fileItemFinished(_ item: SessionOutbox.Item, outbox: SessionOutbox) async {
        guard let fileID = item.id.split(separator: ":").first.map(String.init),
            let transfer = state.withLock({ s in s.fileTransfers.first { $0.id == fileID } })
        else { return }
        let remaining = (try? outbox.remainingChunks(of: fileID)) ?? 0
        let total = transfer.progress.totalUnitCount
        transfer.progress.completedUnitCount =
            remaining == 0 ? total : Self.bytes(received: transfer.chunks - remaining, chunks: transfer.chunks, size: total)
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
