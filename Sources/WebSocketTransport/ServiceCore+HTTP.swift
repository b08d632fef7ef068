import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP response whose headers are sent and whose body waits for HTTP_WRITEABLE.
struct PendingHTTPResponse {
    let body: [UInt8]
    var offset = 0
}

/// A streaming HTTP response whose headers are sent: its connection and its body.
struct OpenHTTPStream {
    /// Valid until LWS_CALLBACK_CLOSED_HTTP, when the entry is removed.
    let wsi: OpaquePointer
    let stream: HTTPStream
}

/// Plain HTTP on the WebSocket port, served from protocols[0] with the configured route table.
extension ServiceCore {
    /// Largest body chunk written per HTTP_WRITEABLE.
    static let httpChunkSize = 16 << 10

    /// LWS_CALLBACK_HTTP: runs the route's handler (404 for unknown paths), writes the headers,
    /// and queues the body for HTTP_WRITEABLE.
    func httpRequest(
        _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ data: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        guard case .server(let configuration, _) = role, let user else { return -1 }
        // Two Content-Length headers: lws frames the body by the first, so whatever a proxy
        // framing by the last took for body would be read as the next request (RFC 9110 §8.6:
        // an unrecoverable error). Closed without an answer, as lws closes a malformed head.
        if lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, 1) > 0 { return -1 }
        // `data` is lws's URI path (`length` bytes), valid only during this callback: copied now.
        let path = data.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? "/"
        let isHead = lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0
        let response: HTTPResponse
        if let route = configuration.httpRoutes[path] {
            response = route()
        } else if let handler = configuration.httpHandler {
            response = handler(request(wsi, path: path, isHead: isHead))
        } else {
            response = .notFound
        }
        let headerCapacity =
            512 + response.contentType.utf8.count
            + response.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 8 }
        let failed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: relay_lws_pre + headerCapacity) {
            buffer -> Bool in
            // Ours for this scope: lws writes the headers after LWS_PRE and sends (or copies) them
            // before lws_finalize_write_http_header returns.
            guard let base = buffer.baseAddress else { return true }
            let start = base + relay_lws_pre
            var position: UnsafeMutablePointer<UInt8>? = start
            let end = base + buffer.count
            // A stream has no length (LWS_ILLEGAL_HTTP_CONTENT_LEN, a cast Swift cannot import).
            let length = response.stream == nil ? lws_filepos_t(response.body.count) : ~lws_filepos_t(0)
            if lws_add_http_common_headers(wsi, response.lwsStatus, response.contentType, length, &position, end) != 0 {
                return true
            }
            for header in response.headers where header.isValid {
                let name = Array((header.name.lowercased() + ":").utf8) + [0]
                let value = Array(header.value.utf8)
                if lws_add_http_header_by_name(wsi, name, value, Int32(value.count), &position, end) != 0 {
                    return true
                }
            }
            return lws_finalize_write_http_header(wsi, start, &position, end) != 0
        }
        if failed {
            response.stream?.markClosed()
            return -1
        }
        if let stream = response.stream {
            if isHead {
                stream.markClosed()
                return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
            }
            return openStream(stream, wsi, user)
        }
        if response.body.isEmpty || isHead {
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
        // Drawn from the ConnectionID counter so it can never be mistaken for a live connection.
        let id = ConnectionID.next().rawValue
        // The HTTP per-session data is lws's; it holds only this integer, the key of the body.
        user.storeBytes(of: id, as: UInt64.self)
        httpResponses[id] = PendingHTTPResponse(body: response.body)
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Keeps a streaming response open: lws stops timing it out as an HTTP transaction, and the
    /// stream wakes this thread through the inbox whenever its producer writes.
    private func openStream(_ stream: HTTPStream, _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer) -> Int32 {
        let id = ConnectionID.next().rawValue
        user.storeBytes(of: id, as: UInt64.self)
        if lws_get_network_wsi(wsi) == wsi {
            // HTTP/1: what lws_http_mark_sse does, without its "not h2 substream" error line.
            lws_http_headers_detach(wsi)
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        } else {
            lws_http_mark_sse(wsi)
        }
        httpStreams[id] = OpenHTTPStream(wsi: wsi, stream: stream)
        stream.attach { [inbox] in inbox.post(.httpStreamReady(id)) }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// The headers the generic handler sees, copied out of lws's header table.
    private func request(_ wsi: OpaquePointer, path: String, isHead: Bool) -> HTTPRequest {
        let others: [(String, lws_token_indexes)] = [
            ("POST", WSI_TOKEN_POST_URI), ("PUT", WSI_TOKEN_PUT_URI), ("DELETE", WSI_TOKEN_DELETE_URI),
            ("PATCH", WSI_TOKEN_PATCH_URI), ("OPTIONS", WSI_TOKEN_OPTIONS_URI),
        ]
        let named = others.first(where: { lws_hdr_total_length(wsi, $0.1) > 0 }).map { $0.0 }
        let method = isHead ? "HEAD" : named ?? "GET"
        let wanted: [(String, lws_token_indexes)] = [
            ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION), ("if-none-match", WSI_TOKEN_HTTP_IF_NONE_MATCH),
            ("accept", WSI_TOKEN_HTTP_ACCEPT), ("user-agent", WSI_TOKEN_HTTP_USER_AGENT), ("host", WSI_TOKEN_HOST),
        ]
        var headers: [String: String] = [:]
        for (name, token) in wanted {
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0 else { continue }
            headers[name] = copyHeader(length + 1) { lws_hdr_copy(wsi, $0, $1, token) }
        }
        var args: [String] = []
        let fragments = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, 0)) > 0 ? 64 : 0
        for index in 0..<fragments {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, Int32(index)))
            guard length > 0 else { break }
            if let arg = copyHeader(
                length + 1, { lws_hdr_copy_fragment(wsi, $0, $1, WSI_TOKEN_HTTP_URI_ARGS, Int32(index)) })
            {
                args.append(arg)
            }
        }
        // lws splits the arguments at each `&` of the URL before it decodes them: kept apart, so
        // `?x=%26token%3D…` is one argument `x`, not a `token` too.
        return HTTPRequest(method: method, path: path, query: args.joined(separator: "&"), arguments: args, headers: headers)
    }

    /// Copies one header with an lws copy function into a String (nil on failure).
    private func copyHeader(_ capacity: Int, _ copy: (UnsafeMutablePointer<CChar>, Int32) -> Int32) -> String? {
        // A temporary buffer of ours; lws writes a NUL-terminated copy into it.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let n = copy(base, Int32(capacity))
            guard n >= 0 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: base, count: Int(n)), as: UTF8.self)
        }
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: writes the next body chunk; completes the transaction after
    /// the last one (lws then closes or keeps the connection alive for another request).
    func httpWriteable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return 0 }
        let id = user.load(as: UInt64.self)
        if let open = httpStreams[id] { return streamWriteable(open, wsi) }
        guard var pending = httpResponses[id] else { return 0 }  // spurious WRITEABLE
        let remaining = pending.body.count - pending.offset
        let count = min(remaining, Self.httpChunkSize)
        let isLast = count == remaining
        let start = stagingBuffer(for: count)
        // The staging buffer is the core's; the body array is borrowed only for the copy.
        pending.body.withUnsafeBytes { bytes in
            start.copyMemory(from: bytes.baseAddress! + pending.offset, byteCount: count)
        }
        let mode = isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        if lws_write(wsi, start.assumingMemoryBound(to: UInt8.self), count, mode) < 0 {
            httpResponses[id] = nil
            return -1
        }
        pending.offset += count
        if isLast {
            httpResponses[id] = nil
            user.storeBytes(of: 0, as: UInt64.self)
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
        httpResponses[id] = pending
        lws_callback_on_writable(wsi)
        return 0
    }

    /// HTTP_WRITEABLE on a stream: writes one chunk of what waits; a closed stream, or one whose
    /// client is gone, closes the connection (-1), after which lws reports CLOSED_HTTP.
    private func streamWriteable(_ open: OpenHTTPStream, _ wsi: OpaquePointer) -> Int32 {
        if Self.clientHasGone(wsi) { return -1 }
        let (bytes, closed) = open.stream.take(upTo: Self.httpChunkSize)
        if closed { return -1 }
        guard !bytes.isEmpty else { return 0 }  // spurious WRITEABLE
        let start = stagingBuffer(for: bytes.count)
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        if lws_write(wsi, start.assumingMemoryBound(to: UInt8.self), bytes.count, LWS_WRITE_HTTP) < 0 { return -1 }
        if open.stream.hasPending { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Whether the client of a streaming response ended its side of the connection (its FIN
    /// waits to be read) or the connection failed. lws 4.1 does not read an HTTP connection
    /// while a response streams, so a client that went away was otherwise noticed only when a
    /// write failed: the second write after its FIN (a console event stream kept its place for
    /// two heartbeats, 30 s), and never for a client that stopped sending but kept reading. A
    /// peek: what a client sent is left for lws.
    static func clientHasGone(_ wsi: OpaquePointer) -> Bool {
        let fd = lws_get_socket_fd(wsi)
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if n == 0 { return true }
        return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }

    // MARK: - CONNECT

    /// The answer to a `CONNECT` request, the only way into lws's raw-socket role here.
    static let connectRefusal: [UInt8] = {
        let body = "CONNECT is not supported\n"
        let head = "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "allow: GET, HEAD, POST\r\nconnection: close\r\ncontent-length: \(body.utf8.count)\r\n\r\n"
        return Array((head + body).utf8)
    }()

    /// LWS_CALLBACK_RAW_ADOPT: lws 4.1 turns a `CONNECT` request into a raw socket bound to
    /// protocols[0], with no timeout at all (`lws_http_to_fallback`), before any HTTP callback:
    /// left alone it would hold its descriptor for as long as the client likes. The server
    /// answers 405 and closes it (a client that never reads is dropped after 5 s); a client
    /// context has no raw connections.
    func refuseRawConnection(_ wsi: OpaquePointer) -> Int32 {
        guard case .server = role else { return -1 }
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
        lws_callback_on_writable(wsi)
        return 0
    }

    /// LWS_CALLBACK_RAW_WRITEABLE of a refused `CONNECT`: writes the 405, then closes (-1).
    func writeRawRefusal(_ wsi: OpaquePointer) -> Int32 {
        let bytes = Self.connectRefusal
        let start = stagingBuffer(for: bytes.count)
        // The staging buffer is the core's; the static array is borrowed only for the copy.
        bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        _ = lws_write(wsi, start.assumingMemoryBound(to: UInt8.self), bytes.count, LWS_WRITE_HTTP)
        return -1
    }

    /// LWS_CALLBACK_WSI_DESTROY of a plain-HTTP wsi: forgets the stream still registered for it.
    func httpStreamDestroyed(_ wsi: OpaquePointer) {
        guard let id = httpStreams.first(where: { $0.value.wsi == wsi })?.key else { return }
        httpStreams.removeValue(forKey: id)?.stream.markClosed()
    }

    /// LWS_CALLBACK_CLOSED_HTTP: forgets an unfinished response or an open stream.
    func httpClosed(_ user: UnsafeMutableRawPointer?) {
        guard let user else { return }
        let id = user.load(as: UInt64.self)
        httpResponses[id] = nil
        httpStreams.removeValue(forKey: id)?.stream.markClosed()
    }
}
