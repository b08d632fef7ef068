import Foundation
import Primitives
import RelayConsole

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The relay console's `state` events (`GET /console/api/events`, PROTOCOL.md's console
/// section; on a cluster, the leading node's), decoded as the relay pushes them: the state on connect, then after every change
/// (at most one per 150 ms). What the runner awaits instead of asking the relay again and
/// again: a device showing up, the counters an `expectRelay` step wants.
struct ConsoleStateStream: Sendable {
    /// The states, in order; finishes when the stream ends or ``close()`` was called.
    let states: AsyncStream<ConsoleJSON.State>
    private let connections: [(session: URLSession, task: URLSessionDataTask)]

    /// Opens the event stream of the console on `127.0.0.1:port` with `token`.
    static func open(port: Int, token: String) throws -> ConsoleStateStream {
        try open(ports: [port], token: token)
    }

    /// Opens the event streams of the consoles on `127.0.0.1:` each of `ports` (a cluster's
    /// nodes) as one: the states of the node that leads as they come (each says its
    /// ``ConsoleJSON/Node``; an edge's are left out), finishing once every stream ended.
    static func open(ports: [Int], token: String) throws -> ConsoleStateStream {
        let (states, sink) = AsyncStream.makeStream(of: ConsoleJSON.State.self, bufferingPolicy: .bufferingNewest(64))
        let open = LockedState(ports.count)
        var connections: [(URLSession, URLSessionDataTask)] = []
        for port in ports {
            guard let url = URL(string: "http://127.0.0.1:\(port)/console/api/events") else {
                throw StepFailure(expected: "a console URL", seen: "port \(port)")
            }
            var request = URLRequest(url: url)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            // The session holds its delegate until it is invalidated (``close()``).
            let reader = EventReader(sink) {
                if open.withLock({ n in
                    n -= 1
                    return n == 0
                }) {
                    sink.finish()
                }
            }
            let session = URLSession(configuration: .ephemeral, delegate: reader, delegateQueue: nil)
            let task = session.dataTask(with: request)
            task.resume()
            connections.append((session, task))
        }
        return ConsoleStateStream(states: states, connections: connections)
    }

    /// Ends the requests (the relays see the subscriber leave).
    func close() {
        for connection in connections {
            connection.task.cancel()
            connection.session.invalidateAndCancel()
        }
    }
}

/// Splits the response body into events (blank-line separated) and yields each `state` one.
private final class EventReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: its one mutable thing, the partial event, is behind a LockedState.
    private let sink: AsyncStream<ConsoleJSON.State>.Continuation
    private let ended: @Sendable () -> Void
    private let partial = LockedState<[UInt8]>([])

    init(_ sink: AsyncStream<ConsoleJSON.State>.Continuation, ended: @escaping @Sendable () -> Void) {
        self.sink = sink
        self.ended = ended
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let blocks = partial.withLock { buffer -> [String] in
            buffer += data
            var out: [String] = []
            while let end = buffer.firstRange(of: [10, 10]) {
                out.append(String(decoding: buffer[..<end.lowerBound], as: UTF8.self))
                buffer.removeSubrange(..<end.upperBound)
            }
            return out
        }
        for block in blocks {
            let lines = block.split(separator: "\n")
            guard lines.contains("event: state"), let data = lines.first(where: { $0.hasPrefix("data: ") }) else { continue }
            // A cluster node that does not lead shows none of the core's state: left out.
            if let state = try? JSONDecoder().decode(ConsoleJSON.State.self, from: Data(data.dropFirst(6).utf8)),
                state.isLeading
            {
                sink.yield(state)
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        ended()
    }
}

extension ConsoleJSON.State {
    /// The relay's counters as the state shows them: open connections (paired devices
    /// connected, plus connections not in a pair), pairs, queued items.
    var counters: RelayCounters {
        RelayCounters(
            connections: unpairedConnections + pairs.reduce(0) { $0 + $1.devices.filter(\.connected).count },
            pairs: pairs.count, queued: pairs.reduce(0) { $0 + $1.directions.reduce(0) { $0 + $1.count } })
    }
}

/// The relay counters an `expectRelay` step checks.
struct RelayCounters: Sendable, Equatable, CustomStringConvertible {
    var connections: Int
    var pairs: Int
    var queued: Int

    var description: String { "pairs \(pairs), queued \(queued), connections \(connections)" }
}
