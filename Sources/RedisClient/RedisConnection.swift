import CHiredis

/// One hiredis connection, used by one thread at a time (the ``RedisClient``'s own thread).
///
/// Synchronous: ``run(_:)`` writes a whole pipeline and reads its replies, blocking for the
/// network. hiredis is reached only through the opaque handles of `CHiredis/shim.h`; no
/// Swift code here reads C memory through a typed pointer.
final class RedisConnection {
    /// The hiredis context; freed in `deinit`. Owned by this object alone.
    private let context: OpaquePointer

    /// Connects to `endpoint` and selects its database.
    ///
    /// - Parameter timeoutMilliseconds: for the connect, and for each read and write after it.
    /// - Throws: ``RedisError/unreachable(_:)`` if the server cannot be reached, or the error
    ///   `SELECT` answered.
    init(endpoint: RedisEndpoint, timeoutMilliseconds: Int) throws(RedisError) {
        guard let context = relay_redis_connect(endpoint.host, Int32(endpoint.port), Int32(timeoutMilliseconds)) else {
            throw .unreachable("hiredis could not allocate a context")
        }
        self.context = context
        if relay_redis_err(context) != 0 {
            throw .unreachable("\(endpoint): \(String(cString: relay_redis_errstr(context)))")
        }
        if endpoint.database != 0 {
            let reply = run([RedisCommand("SELECT", String(endpoint.database))])
            if case .failure(let error) = reply[0] { throw error }
        }
    }

    deinit { relay_redis_free(context) }

    /// Whether the connection broke (after which every call fails; make a new one).
    var isBroken: Bool { relay_redis_err(context) != 0 }

    /// Writes every command, then reads one reply per command, in order (a pipeline).
    ///
    /// Once the connection breaks, that command and every later one get
    /// ``RedisError/unreachable(_:)`` (or ``RedisError/protocolError(_:)`` for bytes hiredis
    /// could not parse).
    func run(_ commands: [RedisCommand]) -> [Result<RedisValue, RedisError>] {
        var results: [Result<RedisValue, RedisError>] = []
        results.reserveCapacity(commands.count)
        for command in commands where !isBroken {
            let bytes = command.encoded
            if relay_redis_append(context, bytes, bytes.count) != 0 { break }
        }
        for _ in commands {
            if let failure = brokenError() {
                results.append(.failure(failure))
                continue
            }
            guard let reply = relay_redis_next_reply(context) else {
                results.append(.failure(brokenError() ?? .protocolError("no reply")))
                continue
            }
            results.append(Self.value(of: reply))
            relay_redis_reply_free(reply)
        }
        return results
    }

    /// The socket's descriptor (-1 when there is none), for ``RedisSubscriber``'s stop.
    var descriptor: Int32 { relay_redis_fd(context) }

    /// Sets the read and write timeout from now on; 0 waits forever.
    func setTimeout(milliseconds: Int) {
        _ = relay_redis_set_timeout(context, Int32(milliseconds))
    }

    /// Queues one command in the output buffer; ``nextReply()`` writes it.
    func append(_ command: RedisCommand) {
        let bytes = command.encoded
        _ = relay_redis_append(context, bytes, bytes.count)
    }

    /// Writes what is buffered, then reads the next reply (blocking up to the timeout).
    func nextReply() -> Result<RedisValue, RedisError> {
        if let failure = brokenError() { return .failure(failure) }
        guard let reply = relay_redis_next_reply(context) else {
            return .failure(brokenError() ?? .protocolError("no reply"))
        }
        defer { relay_redis_reply_free(reply) }
        return Self.value(of: reply)
    }

    /// The error the broken connection stands for, nil while it works.
    private func brokenError() -> RedisError? {
        let code = relay_redis_err(context)
        guard code != 0 else { return nil }
        let reason = String(cString: relay_redis_errstr(context))
        return code == REDIS_ERR_PROTOCOL ? .protocolError(reason) : .unreachable(reason)
    }

    /// Copies a reply out of hiredis (the reply itself stays owned by the caller).
    private static func value(of reply: OpaquePointer) -> Result<RedisValue, RedisError> {
        switch relay_redis_reply_type(reply) {
        case REDIS_REPLY_ERROR: .failure(.errorReply(String(decoding: bytes(of: reply), as: UTF8.self)))
        default: decode(reply)
        }
    }

    private static func decode(_ reply: OpaquePointer) -> Result<RedisValue, RedisError> {
        switch relay_redis_reply_type(reply) {
        case REDIS_REPLY_STRING: return .success(.bulk(bytes(of: reply)))
        case REDIS_REPLY_STATUS: return .success(.status(String(decoding: bytes(of: reply), as: UTF8.self)))
        case REDIS_REPLY_INTEGER: return .success(.integer(relay_redis_reply_integer(reply)))
        case REDIS_REPLY_NIL: return .success(.null)
        case REDIS_REPLY_ERROR:
            // An error inside an array (EXEC's, a script's table) is kept as a value.
            return .success(.status("ERR:" + String(decoding: bytes(of: reply), as: UTF8.self)))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            let count = relay_redis_reply_count(reply)
            elements.reserveCapacity(count)
            for i in 0..<count {
                guard let element = relay_redis_reply_element(reply, i) else { return .success(.null) }
                switch decode(element) {
                case .success(let value): elements.append(value)
                case .failure(let error): return .failure(error)
                }
            }
            return .success(.array(elements))
        case let type: return .failure(.protocolError("unknown reply type \(type)"))
        }
    }

    private static func bytes(of reply: OpaquePointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: relay_redis_reply_length(reply))
        relay_redis_reply_copy(reply, &out)
        return out
    }
}
