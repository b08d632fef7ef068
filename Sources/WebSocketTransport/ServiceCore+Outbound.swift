import CWebSockets

/// Writing a connection's queued messages, one write at a time (at the end of the turn that
/// queued them, then one per WRITEABLE): a batch of whole messages (``ServerFrameBatch``,
/// ``ClientFrameBatch``), a frame written in place, or a frame lws frames from the staging buffer.
extension ServiceCore {
    // MARK: - Queueing

    /// Queues `message` on connection `id` (dropped if it is gone, closing or being dropped), or
    /// closes a connection whose queue would pass its cap.
    func enqueue(_ message: OutboundMessage, on id: ConnectionID) {
        guard let connection = connections[id], connection.localClose == nil, !connection.dropRequested else { return }
        guard let wasIdle = connection.outbound.append(message, cappedAt: connection.maxQueuedBytes) else {
            closeForOverflow(connection)
            return
        }
        // A non-empty queue is either due for the end of this turn or has a WRITEABLE requested
        // (see writeAtEndOfTurn and writeNext).
        if wasIdle { writeSoon.append(id) }
    }

    /// Schedules a close frame after the queued messages; a second request is ignored, and so
    /// is one for a connection being dropped (``drop(_:)``).
    func requestClose(_ connection: ConnectionState, _ frame: CloseFrame, flushSeconds: Int32 = closeFlushSeconds) {
        guard connection.localClose == nil, !connection.dropRequested else { return }
        connection.localClose = frame
        connection.closeFlushSeconds = flushSeconds
        if connection.outbound.isEmpty { lws_callback_on_writable(connection.wsi) }
        // Backstop: a peer that stops reading never lets the queue drain; lws closes the
        // connection (LWS_CALLBACK_CLOSED follows) if it is still open after this.
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, flushSeconds)
        // lws 4.1's libev glue arms a timer added between turns (a close asked for at the end
        // of a turn) only at the next activity, which a peer that reads nothing never makes:
        // wake the loop, so the backstop is armed now (a review found it waiting for the next
        // keepalive firing). Closes are rare; the wake-up costs one loop turn.
        if resources.eventLoop != nil, let context { lws_cancel_service(context) }
    }

    /// How long a closing connection may take to flush its queue, and then to answer the close
    /// frame, before it is dropped.
    static let closeFlushSeconds: Int32 = 5
    /// How long a slow consumer may take to read what the kernel and lws already hold (at most
    /// one fragment in lws, the socket buffers in the kernel) and then the close frame; and
    /// then, again, to answer it.
    static let slowConsumerFlushSeconds: Int32 = 30

    /// The outbound cap was exceeded: drop the backlog and close with 1008 (PROTOCOL.md §2.2).
    ///
    /// The close frame goes out on the next WRITEABLE, which lws gives once the peer has read
    /// the part of a frame lws still holds (a control frame may follow a fragment, RFC 6455
    /// §5.4). A slow reader therefore gets the 1008 frame after the bytes already in flight,
    /// instead of a bare TCP close (which its WebSocket library reports as 1006); only a peer
    /// that reads nothing for ``slowConsumerFlushSeconds`` is dropped without one. Memory stays
    /// bounded meanwhile: the backlog is gone, and lws holds at most one fragment.
    ///
    /// The owner learns at once (`closed` with 1008 and the reason): nothing it sends reaches
    /// the connection any more, so it should not wait for the flush to treat it as gone.
    ///
    /// Such a peer cannot answer a ping either (it sits behind the backlog), so the keepalive
    /// timer starts over here and again when the close frame is written: its hang-up would
    /// otherwise end the flush early, without the close frame (PROTOCOL.md §2.2).
    func closeForOverflow(_ connection: ConnectionState) {
        connection.outbound.removeAll()
        let frame = CloseFrame(code: 1008, reason: WebSocketServer.slowConsumerReason)
        requestClose(connection, frame, flushSeconds: Self.slowConsumerFlushSeconds)
        connection.lastHeardAt = MonotonicClock.nanoseconds()
        connection.closeReported = true
        connection.sink.closed(connection.id, code: frame.code, reason: frame.reason)
    }

    // MARK: - Writing

    /// Handles one WRITEABLE (or a connection's end-of-turn write): exactly one `lws_write` (a
    /// frame of the first queued message, or a batch of whole ones), or the pending close, or
    /// nothing if the callback was spurious or the connection is being dropped.
    func writeNext(_ connection: ConnectionState) -> Int32 {
        guard !connection.outbound.isEmpty else {
            // Spurious WRITEABLE, or the close frame is out already, or the peer closed first
            // (lws answers that itself; a second close frame must not follow its answer), or the
            // connection is being dropped (the frame's wait for an answer would replace the kill;
            // a drop empties the queue).
            guard let close = connection.localClose, !connection.localCloseSent, connection.peerClose == nil,
                !connection.dropRequested
            else {
                return 0
            }
            return writeClose(close, connection)
        }
        if connection.writesUnmaskedFrames {
            let batch = ServerFrameBatch.count(in: connection.outbound)
            if batch > 0 { return writeBatch(of: batch, connection) }
            // No copy of the message may be held here: its storage is written in place.
            if connection.outbound.firstFramesInPlace { return writeInPlace(connection) }
        } else {
            return writeClientFrames(connection)
        }
        guard let message = connection.outbound.first else { return 0 }
        let remaining = message.payload.count - message.offset
        let count = min(remaining, message.fragmentSize)
        ensureWriteCapacity(count)
        let payloadStart = writeBuffer + relay_lws_pre
        // writeBuffer is ours (allocated in init, freed in deinit); the payload array is borrowed
        // only for the copy.
        message.payload.withUnsafeBytes { bytes in
            if count > 0 {
                payloadStart.copyMemory(from: bytes.baseAddress! + message.offset, byteCount: count)
            }
        }
        let flags = lws_write_ws_flags(message.kind.lwsFlag, message.offset == 0 ? 1 : 0, count == remaining ? 1 : 0)
        // Only an observed connection reads the clock, as close to the write as it can.
        let observer = message.offset == 0 ? connection.observer : nil
        let stamp = observer == nil ? 0 : MonotonicClock.nanoseconds()
        let written = lws_write(
            connection.wsi, payloadStart.assumingMemoryBound(to: UInt8.self), count,
            lws_write_protocol(rawValue: UInt32(bitPattern: flags)))
        if written < 0 { return -1 }
        observer?.wrote(message.payloadArray, at: stamp)
        connection.outbound.advanceFirst(by: count)
        requestWritableIfPending(connection)
        return 0
    }

    /// Writes this side's close frame, after everything queued before it, and waits (the
    /// connection's flush time again) for the peer's (see the `WS_PEER_INITIATED_CLOSE` case in
    /// ``handle(_:_:_:_:_:)``).
    ///
    /// Not through `lws_close_reason` and a -1, which leaves the close to lws 4.1: it gives the
    /// frame 5 s to be written and 5 s more for the answer, then closes the socket, whatever
    /// the peer still has to read before the frame. A slow consumer's backlog takes longer, and
    /// a pong it then wrote reached a closed socket, whose reset discarded everything it had not
    /// read, the close frame included (`SlowReaderTests`). lws 4.1 also keeps that reason in the
    /// buffer its keepalive writes a ping's timestamp into. Written here, the frame is in the
    /// connection's own flush time and storage, and lws treats it as any other raw write. lws
    /// still counts the connection as open, so its pong to the peer's ping may follow the
    /// frame: a control frame, which RFC 6455 §5.5.1 allows after a close (the keepalive's own
    /// pings stop at the close frame).
    private func writeClose(_ close: CloseFrame, _ connection: ConnectionState) -> Int32 {
        guard writeCloseFrame(close, connection) else { return -1 }
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, connection.closeFlushSeconds)
        // A slow consumer reads the backlog ahead of this frame before it can see the next
        // ping, so the keepalive starts over once more: at its defaults its hang-up (40 s) then
        // comes after the wait for the answer (30 s).
        if connection.closeFlushSeconds > Self.closeFlushSeconds { connection.lastHeardAt = MonotonicClock.nanoseconds() }
        return 0
    }

    /// Writes `close` as a close frame, raw (lws sends its own unsent tail first, so it follows
    /// what was handed to lws before it), and records it as sent; false if the write failed.
    func writeCloseFrame(_ close: CloseFrame, _ connection: ConnectionState) -> Bool {
        let code = CloseFrame.sendable(code: close.code ?? 1000)
        let body = [UInt8(code >> 8), UInt8(code & 0xFF)] + CloseFrame.sendable(reason: close.reason)
        // Framed as the data frames are (a client's masked, RFC 6455 §5.3), then the first byte
        // set to FIN and opcode 8: the rest of a header does not depend on the opcode.
        var frame: [UInt8] = []
        if connection.writesUnmaskedFrames {
            ServerFrameBatch.appendHeader(kind: .text, length: body.count, into: &frame)
            frame += body
        } else {
            ClientFrameBatch.appendFrame(
                body[...], opcode: .text, isFirst: true, isFinal: true, key: maskKeys.next(), into: &frame)
        }
        frame[0] = 0x88
        guard writeRaw(&frame, connection) else { return false }
        connection.localClose = close
        connection.localCloseSent = true
        return true
    }

    /// Writes the next frame of the first queued message where it lies: its header goes into
    /// the bytes just before it (the message's headroom, or the tail of the frame written before,
    /// which lws has sent or copied by then) and the two go out as one raw send. A large
    /// `deliver` is not copied into the staging buffer on its way out.
    private func writeInPlace(_ connection: ConnectionState) -> Int32 {
        let observer = connection.outbound.first.flatMap { $0.offset == 0 ? connection.observer : nil }
        let observed = observer == nil ? nil : connection.outbound.first?.payloadArray
        let stamp = observer == nil ? 0 : MonotonicClock.nanoseconds()
        // The queue's own bytes, borrowed for the call; lws sends them or keeps a copy before it returns.
        let (written, count) = connection.outbound.withFirstFrameInPlace { frame, count in
            let written = lws_write(
                connection.wsi, UnsafeMutablePointer(mutating: frame.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                frame.count, lws_write_protocol(rawValue: UInt32(LWS_WRITE_HTTP.rawValue)))
            return (written, count)
        }
        if written < 0 { return -1 }
        if let observer, let observed { observer.wrote(observed, at: stamp) }
        connection.outbound.advanceFirst(by: count)
        requestWritableIfPending(connection)
        return 0
    }

    /// Writes the first `n` queued messages as one raw send (``ServerFrameBatch``).
    private func writeBatch(of n: Int, _ connection: ConnectionState) -> Int32 {
        var frames = ServerFrameBatch.frames(of: n, in: connection.outbound)
        guard writeRaw(&frames, connection) else { return -1 }
        connection.outbound.removeWhole(n)
        requestWritableIfPending(connection)
        return 0
    }

    /// Writes, once each, the connections whose queue became non-empty during this turn.
    ///
    /// Runs on the service thread between turns of the loop, outside any callback. Waiting for
    /// WRITEABLE instead would cost each such connection a POLLOUT on and off (two
    /// `epoll_ctl`) and one more wake-up, per turn: the relay's every `accepted` and `deliver`.
    /// lws 4.1 allows a write outside WRITEABLE (its back-to-back check is compiled out, and a
    /// raw write it cannot finish is kept in its own buffer and sent before anything else), so
    /// the only connections left to WRITEABLE are those where lws still holds part of an
    /// earlier write, or whose peer began the close handshake (lws answers that itself, and no
    /// data may follow). What one write leaves queued asks for WRITEABLE as before.
    func writeAtEndOfTurn() {
        // A connection queued while this runs (nothing does today) is written in the next round,
        // not left waiting for a wake-up: the due list is swapped out before each round.
        while !writeSoon.isEmpty {
            swap(&writeSoon, &writeDue)
            for id in writeDue {
                guard let connection = connections[id], !connection.outbound.isEmpty else { continue }
                if connection.peerClose != nil {
                    lws_callback_on_writable(connection.wsi)
                } else if lws_partial_buffered(connection.wsi) != 0 {
                    unpublishedWrites.heldBack += 1
                    lws_callback_on_writable(connection.wsi)
                } else {
                    unpublishedWrites.endOfTurn += 1
                    guard writeNext(connection) < 0 else { continue }
                    // Outside a callback nobody takes the -1: have lws close the connection on its
                    // next turn (CLOSED follows, as when WRITEABLE returns -1). lws 4.1's libev
                    // glue arms a timer added between turns only at the next activity: wake it.
                    drop(connection)
                    if resources.eventLoop != nil, let context { lws_cancel_service(context) }
                }
            }
            writeDue.removeAll(keepingCapacity: writeDue.capacity <= 4096)
        }
    }

    /// Adds this turn's writes to the counts other threads read (one lock, only after writes).
    func publishWriteCounts() {
        guard !unpublishedWrites.isZero else { return }
        let counts = unpublishedWrites
        inbox.writeCounts.withLock { $0 += counts }
        unpublishedWrites = WriteCounts()
    }

    /// After a write: asks for the next WRITEABLE while messages or a close are still queued.
    func requestWritableIfPending(_ connection: ConnectionState) {
        if !connection.outbound.isEmpty || (connection.localClose != nil && !connection.localCloseSent) {
            lws_callback_on_writable(connection.wsi)
        }
    }

    /// Grows the staging buffer when a message uses a larger fragment size than the default.
    func ensureWriteCapacity(_ payloadBytes: Int) {
        let needed = relay_lws_pre + payloadBytes
        guard needed > writeBufferCapacity else { return }
        writeBuffer.deallocate()
        writeBufferCapacity = max(needed, writeBufferCapacity * 2)
        writeBuffer = .allocate(byteCount: writeBufferCapacity, alignment: 16)
    }

    /// The staging buffer's payload area (after `LWS_PRE`), at least `payloadBytes` long.
    func stagingBuffer(for payloadBytes: Int) -> UnsafeMutableRawPointer {
        ensureWriteCapacity(payloadBytes)
        return writeBuffer + relay_lws_pre
    }
}

/// How a context's WebSocket writes were made, counted since it started.
///
/// A connection whose queue fills during a turn of the service loop is written at the end of
/// that turn (``endOfTurn``), with no POLLOUT round trip. What that one write leaves queued, and
/// anything queued while lws still holds the unsent part of an earlier write, goes out on a
/// later WRITEABLE callback (``afterWriteable``); lws sends its own held bytes on POLLOUT without
/// a callback, and those are not counted. A relay answering at wire speed writes almost
/// everything at the end of turns; a peer that reads slowly moves writes to WRITEABLE.
public struct WriteCounts: Sendable, Hashable {
    /// `lws_write` calls made at the end of a turn, outside any callback.
    public var endOfTurn = 0
    /// `lws_write` calls made in a WRITEABLE callback.
    public var afterWriteable = 0
    /// Connections whose end-of-turn write waited for WRITEABLE because lws still held part of
    /// an earlier write (the peer's socket was full).
    public var heldBack = 0

    /// Counts as given (zero by default).
    public init(endOfTurn: Int = 0, afterWriteable: Int = 0, heldBack: Int = 0) {
        self.endOfTurn = endOfTurn
        self.afterWriteable = afterWriteable
        self.heldBack = heldBack
    }

    /// Nothing counted.
    var isZero: Bool { endOfTurn == 0 && afterWriteable == 0 && heldBack == 0 }

    static func += (a: inout WriteCounts, b: WriteCounts) {
        a.endOfTurn += b.endOfTurn
        a.afterWriteable += b.afterWriteable
        a.heldBack += b.heldBack
    }
}
