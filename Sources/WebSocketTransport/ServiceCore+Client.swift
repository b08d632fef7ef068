import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the service thread needs to open one client connection, and how to report back.
///
/// Immutable; owned by exactly one place at a time (the inbox, then ``ServiceCore/pendingConnects``),
/// and whoever removes it resumes ``completion`` exactly once.
final class ConnectRequest: Sendable {
    let id: ConnectionID
    let url: WebSocketURL
    /// The offered subprotocol, or nil to offer none.
    let subprotocol: String?
    let allowSelfSigned: Bool
    let maxMessageBytes: Int
    let maxQueuedBytes: Int
    let headers: [HTTPHeader]
    let events: AsyncStream<ClientEvent>.Continuation
    private let completion: CheckedContinuation<Void, any Error>

    init(
        id: ConnectionID, url: WebSocketURL, subprotocol: String?, allowSelfSigned: Bool, maxMessageBytes: Int,
        maxQueuedBytes: Int, headers: [HTTPHeader], events: AsyncStream<ClientEvent>.Continuation,
        completion: CheckedContinuation<Void, any Error>
    ) {
        self.id = id
        self.url = url
        self.subprotocol = subprotocol
        self.allowSelfSigned = allowSelfSigned
        self.maxMessageBytes = maxMessageBytes
        self.maxQueuedBytes = maxQueuedBytes
        self.headers = headers
        self.events = events
        self.completion = completion
    }

    /// Resumes `connect` successfully.
    func succeed() {
        completion.resume()
    }

    /// Resumes `connect` with an error and finishes the (never used) event stream.
    func fail(_ error: any Error) {
        events.finish()
        completion.resume(throwing: error)
    }
}

/// Client-side callbacks and commands.
extension ServiceCore {
    /// Starts a client connection (the `.connect` command); the outcome arrives as
    /// CLIENT_ESTABLISHED, CLIENT_CONNECTION_ERROR or CLIENT_CLOSED.
    func openClientConnection(_ request: ConnectRequest) {
        guard let context, shutdownDeadline == nil else {
            request.fail(TransportError.shutDown)
            return
        }
        if cancelledConnects.remove(request.id) != nil {
            request.fail(CancellationError())
            return
        }
        pendingConnects[request.id] = request
        let url = request.url
        var flags: Int32 = 0
        if url.isSecure {
            flags |= Int32(LCCSCF_USE_SSL.rawValue)
            if request.allowSelfSigned {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
                flags |= Int32(LCCSCF_ALLOW_EXPIRED.rawValue)
            }
        }
        let strings = [url.host, url.path, url.hostHeader, request.subprotocol ?? "", Self.clientProtocolName]
        let copies = strings.map { strdup($0) }
        // The strdup copies are ours and freed below: lws copies these strings into the
        // connection's own stash during lws_client_connect_via_info.
        defer { for copy in copies { free(copy) } }
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(copies[0])
        info.port = Int32(url.port)
        info.path = UnsafePointer(copies[1])
        info.host = UnsafePointer(copies[2])
        info.protocol = request.subprotocol == nil ? nil : UnsafePointer(copies[3])
        info.local_protocol_name = UnsafePointer(copies[4])
        info.ssl_connection = flags
        info.ietf_version_or_minus_one = -1
        // The opaque user data carries only the integer ID, so CONNECTION_ERROR can find the request.
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(request.id.rawValue))
        info.retry_and_idle_policy = UnsafePointer(resources.retryPolicy)
        errno = 0
        connectingID = request.id
        let wsi = lws_client_connect_via_info(&info)
        connectingID = nil
        if wsi == nil, let failed = pendingConnects.removeValue(forKey: request.id) {
            // lws reports errors detected inside the call (DNS lookup, socket setup) only through
            // the NULL return; errno may or may not say more.
            let code = errno
            let detail = code == 0 ? "address lookup or socket setup failed" : String(cString: strerror(code))
            failed.fail(
                TransportError.connectionFailed(
                    url: url.text, reason: "lws_client_connect_via_info returned NULL: \(detail)"))
        }
    }

    static var clientProtocolName: String { LWSContextResources.clientProtocolName }

    /// The `.cancelConnect` command: fails the pending `connect` with `CancellationError`; the
    /// half-open connection is then refused at CLIENT_ESTABLISHED (no pending request).
    func cancelConnect(_ id: ConnectionID) {
        if let request = pendingConnects.removeValue(forKey: id) {
            request.fail(CancellationError())
        } else if connections[id] == nil {
            cancelledConnects.insert(id)  // the connect command has not arrived yet
        }
    }

    /// LWS_CALLBACK_CLIENT_ESTABLISHED: moves the request into the connection table and resumes
    /// `connect`; refuses (-1) a connection nobody waits for any more.
    func clientEstablished(_ wsi: OpaquePointer) -> Int32 {
        guard let id = connectionID(wsi, nil), let request = pendingConnects.removeValue(forKey: id) else {
            return -1
        }
        connections[id] = ConnectionState(
            id: id, wsi: wsi, sink: .client(request.events), maxMessageBytes: request.maxMessageBytes,
            maxQueuedBytes: request.maxQueuedBytes)
        request.succeed()
        return 0
    }

    /// LWS_CALLBACK_CLIENT_CONNECTION_ERROR: fails the pending `connect` with lws's reason.
    func clientConnectionError(_ wsi: OpaquePointer, _ data: UnsafeMutableRawPointer?, _ length: Int) {
        guard let id = connectionID(wsi, nil), let request = pendingConnects.removeValue(forKey: id) else { return }
        // `data` is lws's error text (may be NULL), valid only during this callback: copied now.
        var reason = "unknown error"
        if let data {
            let text = UnsafeRawBufferPointer(start: data, count: length)
            reason =
                length > 0
                ? String(decoding: text, as: UTF8.self)
                : String(cString: data.assumingMemoryBound(to: CChar.self))
        }
        request.fail(TransportError.connectionFailed(url: request.url.text, reason: reason))
    }

    /// LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: writes the request's extra headers.
    ///
    /// `data` is lws's `char **` cursor into its header buffer and `length` the space left;
    /// a header that does not fit fails the handshake (-1) rather than being silently dropped.
    func appendHandshakeHeaders(_ wsi: OpaquePointer, _ data: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let id = connectionID(wsi, nil), let request = pendingConnects[id], !request.headers.isEmpty,
            let data
        else { return 0 }
        let cursor = data.assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)
        var space = length
        for header in request.headers {
            let line = Array("\(header.name): \(header.value)\r\n".utf8)
            guard line.count < space, let position = cursor.pointee else { return -1 }
            // lws owns the header buffer; we write inside the `length` bytes it granted.
            line.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(position).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            cursor.pointee = position + line.count
            space -= line.count
        }
        return 0
    }
}

/// Client message handlers and observers (``ClientMessageHandler``, ``ClientMessageObserver``).
extension ServiceCore {
    /// The `.attach` command: sets or clears a client connection's observer or handler; a new
    /// handler's ``ClientMessageHandler/attached(to:outbound:)`` runs now and its frames are queued.
    func attach(_ attachment: ClientAttachment, to id: ConnectionID) {
        guard let connection = connections[id] else { return }  // closed already
        switch attachment {
        case .observer(let observer):
            connection.observer = observer
        case .handler(let handler):
            connection.handler = handler
            handler?.attached(to: id, outbound: &clientHandlerOutbound)
            queueClientHandlerOutbound()
        }
    }

    /// Hands a complete inbound message to the connection's handler, then queues what it sent
    /// on its connections, written at the end of the turn (no inbox, no `lws_cancel_service`).
    func runHandler(
        _ handler: any ClientMessageHandler, _ event: ClientEvent, on id: ConnectionID
    ) -> ClientEventDisposition {
        let disposition = handler.handle(event, on: id, outbound: &clientHandlerOutbound)
        queueClientHandlerOutbound()
        return disposition
    }

    private func queueClientHandlerOutbound() {
        guard !clientHandlerOutbound.isEmpty else { return }
        for command in clientHandlerOutbound.commands { apply(command) }
        clientHandlerOutbound.removeAll()
    }
}

/// The client write path (``ClientFrameBatch``).
extension ServiceCore {
    /// One write of a client connection with messages queued (at the end of a turn, or on
    /// WRITEABLE): one raw send of the whole messages at the head of the queue, or of the first
    /// message's next fragment.
    func writeClientFrames(_ connection: ConnectionState) -> Int32 {
        let whole = ClientFrameBatch.count(in: connection.outbound)
        var frames: [UInt8]
        var fragment = 0
        if whole > 0 {
            frames = ClientFrameBatch.frames(of: whole, in: connection.outbound, keys: &maskKeys)
        } else if let next = ClientFrameBatch.nextFragment(of: connection.outbound, keys: &maskKeys) {
            (frames, fragment) = next
        } else {
            return 0
        }
        // Only an observed connection reads the clock, as close to the write as it can.
        let observer = connection.observer
        let stamp = observer == nil ? 0 : MonotonicClock.nanoseconds()
        guard writeRaw(&frames, connection) else { return -1 }
        if let observer {
            let firsts = whole > 0 ? connection.outbound.pending.prefix(whole) : connection.outbound.pending.prefix(1)
            for message in firsts where message.offset == 0 { observer.wrote(message.payloadArray, at: stamp) }
        }
        if whole > 0 {
            connection.outbound.removeWhole(whole)
        } else {
            connection.outbound.advanceFirst(by: fragment)
        }
        requestWritableIfPending(connection)
        return 0
    }

    /// Writes `frames` (whole frames, ready for the wire) as one raw send; lws keeps what the
    /// kernel does not take and sends it before anything else. Both batched write paths end
    /// here: the client's masked frames and a server's ``ServerFrameBatch``.
    func writeRaw(_ frames: inout [UInt8], _ connection: ConnectionState) -> Bool {
        // lws sends (or keeps) the bytes during the call; the array is borrowed only for it.
        let written = frames.withUnsafeMutableBufferPointer { bytes in
            lws_write(connection.wsi, bytes.baseAddress, bytes.count, lws_write_protocol(rawValue: UInt32(LWS_WRITE_HTTP.rawValue)))
        }
        return written >= 0
    }
}
