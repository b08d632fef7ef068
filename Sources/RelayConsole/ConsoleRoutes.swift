import RelayCore
import RelayProtocol
import WebSocketTransport

/// The console's HTTP side: `/console` (the page) and `/console/api/...` (JSON), every request
/// with the token. Runs on the lws service thread: each answer is built from the hub at once.
///
/// | Method | Path | Does |
/// |---|---|---|
/// | GET | `/console` | the page |
/// | GET | `/console/api/state` | pairs, devices, queues, faults |
/// | GET | `/console/api/frames?pair=ID&after=N&before=N&limit=N` | the frame log, newest first |
/// | GET | `/console/api/events?pair=ID` | server-sent events: state, faces, frames as they change (``ConsoleEvents``); 503 when ``ConsoleConfiguration/maxEventStreams`` are open |
/// | GET | `/console/api/faults` | faults in force |
/// | POST | `/console/api/faults?target=T&kind=K&ms=N&p=P&left=N` | sets a fault |
/// | POST | `/console/api/faults/clear?target=T` | clears the target's faults (all without `target`) |
public struct ConsoleRoutes: Sendable {
    let hub: ConsoleHub
    let clock: @Sendable () -> Timestamp

    /// Routes for `hub`; `clock` stamps faults as they are set.
    public init(hub: ConsoleHub, clock: @escaping @Sendable () -> Timestamp) {
        self.hub = hub
        self.clock = clock
    }

    /// The answer to `request`, or nil when its path is not the console's.
    public func handle(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.path == "/console" || request.path.hasPrefix("/console/") else { return nil }
        guard authorized(request) else {
            return json(ConsoleJSON.Message(ok: false, message: "console token missing or wrong"), status: 401)
        }
        let query = request.queryItems
        switch (request.method, request.path) {
        case ("GET", "/console"), ("HEAD", "/console"), ("GET", "/console/"), ("HEAD", "/console/"):
            return HTTPResponse(
                contentType: "text/html; charset=utf-8", body: Array(ConsolePage.html.utf8),
                headers: [HTTPHeader(name: "Cache-Control", value: "no-store")])
        case ("GET", "/console/api/state"), ("HEAD", "/console/api/state"):
            return json(hub.state.withLock { ConsoleJSON.state($0) })
        case ("GET", "/console/api/frames"), ("HEAD", "/console/api/frames"):
            let pair = query["pair"].flatMap { $0.isEmpty ? nil : PairID($0) }
            var numbers: [String: Int] = [:]
            for name in ["after", "before", "limit"] {
                guard let text = query[name] else { continue }
                guard let n = Int(text) else {
                    return json(ConsoleJSON.Message(ok: false, message: "\(name) must be an integer, not '\(text)'"), status: 400)
                }
                numbers[name] = n
            }
            let limit = min(500, max(1, numbers["limit"] ?? 200))
            let (after, before) = (numbers["after"] ?? 0, numbers["before"] ?? Int.max)
            return json(
                hub.state.withLock {
                    ConsoleJSON.frames($0.log.entries(pair: pair, after: after, before: before, limit: limit))
                })
        case ("HEAD", "/console/api/events"):
            // The stream's headers alone: no place taken, nothing written (the transport closes
            // a stream answered to HEAD at once).
            return .eventStream(HTTPStream())
        case ("GET", "/console/api/events"):
            let stream = HTTPStream()
            guard hub.subscribe(stream, pair: query["pair"].flatMap { $0.isEmpty ? nil : PairID($0) }) else {
                let most = hub.configuration.maxEventStreams
                return json(
                    ConsoleJSON.Message(
                        ok: false, message: "\(most) console event streams are open, the most this relay serves: close a console page"),
                    status: 503, headers: [HTTPHeader(name: "Retry-After", value: "5")])
            }
            return .eventStream(stream)
        case ("GET", "/console/api/faults"), ("HEAD", "/console/api/faults"):
            return json(hub.state.withLock { $0.plan.faultsInForce.map(ConsoleJSON.fault) })
        case ("POST", "/console/api/faults") where !hub.appliesFaults:
            return json(
                ConsoleJSON.Message(ok: false, message: "this cluster node does not lead: set faults on the leading node's console"),
                status: 409)
        case ("POST", "/console/api/faults"):
            do {
                let fault = try Self.fault(from: query, at: clock())
                try hub.set(fault)
                var view = ConsoleJSON.fault(fault)
                if !hub.knows(fault.target) {
                    // Not a 404: the console's view lags a fresh pair by up to 150 ms.
                    view.warning = "no \(fault.target) in the console's view of the relay (it lags by up to 150 ms): "
                        + "check the id in /console/api/state; the fault is set and applies if it appears"
                } else if fault.kind == .disconnect && !hub.showsConnected(fault.target) {
                    view.warning = "\(fault.target) is not connected in the console's view of the relay (it lags by up to 150 ms): "
                        + "the disconnect waits, listed in force, and fires once it connects"
                }
                return json(view)
            } catch {
                // A JSON body is not read: say where the fields go.
                let hint = query.isEmpty ? " (the fault's fields are query parameters: ?target=pair:ID&kind=delay&ms=500)" : ""
                return json(ConsoleJSON.Message(ok: false, message: error.description + hint), status: 400)
            }
        case ("POST", "/console/api/faults/clear"):
            do {
                let target = try query["target"].map { (t) throws(FaultError) in try FaultTarget(parsing: t) }
                let removed = hub.clear(target)
                return json(ConsoleJSON.Message(ok: true, message: "cleared \(removed.count) fault(s)"))
            } catch {
                return json(ConsoleJSON.Message(ok: false, message: error.description), status: 400)
            }
        case (_, "/console/api/faults"):
            return json(ConsoleJSON.Message(ok: false, message: "use GET or POST"), status: 405, headers: [Self.allow("GET, HEAD, POST")])
        case (_, "/console/api/faults/clear"):
            return json(ConsoleJSON.Message(ok: false, message: "use POST"), status: 405, headers: [Self.allow("POST")])
        case (_, "/console/api/state"), (_, "/console/api/frames"), (_, "/console/api/events"), (_, "/console"), (_, "/console/"):
            return json(ConsoleJSON.Message(ok: false, message: "use GET"), status: 405, headers: [Self.allow("GET, HEAD")])
        default:
            return json(ConsoleJSON.Message(ok: false, message: "no such console path"), status: 404)
        }
    }

    /// Whether the request carries the token (`?token=` or `Authorization: Bearer`).
    func authorized(_ request: HTTPRequest) -> Bool {
        let expected = hub.configuration.token
        guard !expected.isEmpty else { return false }  // `serve` refuses one; nothing matches it
        if let given = request.queryItems["token"], Self.same(given, expected) { return true }
        // The scheme is case-insensitive (RFC 9110 §11.1).
        if let header = request.headers["authorization"], header.count > 7, header.prefix(7).lowercased() == "bearer " {
            return Self.same(String(header.dropFirst(7)), expected)
        }
        return false
    }

    /// Compares in time independent of where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var diff = x.count ^ y.count
        for i in 0..<min(x.count, y.count) { diff |= Int(x[i] ^ y[i]) }
        return diff == 0
    }

    /// A fault from the API's query arguments.
    static func fault(from query: [String: String], at now: Timestamp) throws(FaultError) -> Fault {
        guard let kindName = query["kind"], let kind = FaultKind(rawValue: kindName) else {
            let names = FaultKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw FaultError("kind must be one of \(names)")
        }
        guard let targetText = query["target"] else { throw FaultError("target (pair:ID or device:ID) is required") }
        let target = try FaultTarget(parsing: targetText)
        func int(_ name: String) throws(FaultError) -> Int? {
            guard let text = query[name] else { return nil }
            guard let n = Int(text) else { throw FaultError("\(name) must be an integer, not '\(text)'") }
            return n
        }
        var probability: Double?
        if let text = query["p"] {
            guard let p = Double(text) else { throw FaultError("p must be a number, not '\(text)'") }
            probability = p
        }
        return Fault(kind, on: target, milliseconds: try int("ms"), probability: probability, left: try int("left"), at: now)
    }

    /// A JSON answer, never cached; `headers` go with it (a 405's `Allow`, a 503's `Retry-After`).
    private func json(_ value: some Encodable, status: Int = 200, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json", body: ConsoleJSON.encode(value),
            headers: [HTTPHeader(name: "Cache-Control", value: "no-store")] + headers)
    }

    /// The methods a 405 names (RFC 9110 §15.5.6).
    private static func allow(_ methods: String) -> HTTPHeader {
        HTTPHeader(name: "Allow", value: methods)
    }
}
