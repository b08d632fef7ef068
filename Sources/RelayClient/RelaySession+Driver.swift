import Foundation
import RelayProtocol
import WebSocketTransport

extension RelaySession {
    // MARK: - Running the core

    /// Runs `command` and waits for the core to finish it.
    func perform(_ command: SessionCommand) async throws -> SessionOutcome {
        let ticket = takeTicket()
        return try await withCheckedThrowingContinuation { continuation in
            waiters[ticket] = continuation
            feed(.command(ticket, command))
        }
    }

    /// Hands `command` to the core and returns; `completion` runs (on this actor) when the core
    /// finished it.
    func submit(
        _ command: SessionCommand, completion: @escaping @Sendable (Result<SessionOutcome, RelaySessionError>) -> Void
    ) {
        let ticket = takeTicket()
        completions[ticket] = completion
        feed(.command(ticket, command))
    }

    /// Runs a command the core finishes at once (no answer from the relay needed).
    func performNow(_ command: SessionCommand) -> Result<SessionOutcome, RelaySessionError> {
        let ticket = takeTicket()
        feed(.command(ticket, command))
        return finished.removeValue(forKey: ticket) ?? .success(.done)
    }

    private func takeTicket() -> SessionTicket {
        nextTicket += 1
        return SessionTicket(nextTicket)
    }

    /// Feeds `input` to the core and carries out its actions (a write's answer goes back in
    /// before anything else happens).
    func feed(_ input: SessionInput) {
        var inputs = [input]
        while !inputs.isEmpty {
            for action in core.handle(inputs.removeFirst(), now: .now) {
                if let answer = execute(action) { inputs.append(answer) }
            }
        }
    }

    /// Carries out one action; returns the input it produces at once, if any.
    private func execute(_ action: SessionAction) -> SessionInput? {
        switch action {
        case .connect:
            generation += 1
            let g = generation
            connectionTask = Task { await self.runConnection(g) }
        case .disconnect(let code, let reason):
            connection?.close(code: code, reason: reason)
        case .send(let frame):
            connection?.send(FrameCodec.encode(frame))
        case .persist(let write):
            do {
                try store.save(write.records)
                return .persisted(id: write.id)
            } catch {
                return .persistFailed(id: write.id, reason: "\(error)")
            }
        case .emit(let event):
            eventSink.yield(event)
            if case .reachabilityChanged(let r) = event { reachabilitySink.yield(r) }
        case .complete(let ticket, let result):
            if let waiter = waiters.removeValue(forKey: ticket) {
                waiter.resume(with: result.mapError { $0 as any Error })
            } else if let completion = completions.removeValue(forKey: ticket) {
                completion(result)
            } else {
                finished[ticket] = result
            }
        case .armDeadline(let at):
            timer?.cancel()
            timer = at.map { at in
                Task {
                    do {
                        try await Task.sleep(until: at, clock: .continuous)
                    } catch {
                        return  // replaced by a newer deadline, or the session closed
                    }
                    self.feed(.tick)
                }
            }
        }
        return nil
    }

    // MARK: - The connection

    /// One connection: open it, pass its frames to the core, report its end.
    private func runConnection(_ g: Int) async {
        let conn: ClientConnection
        do {
            conn = try await clients.connect(to: configuration.url, allowSelfSigned: configuration.allowSelfSigned)
        } catch {
            if g == generation { feed(.connectFailed(reason: "\(error)")) }
            return
        }
        guard g == generation, core.isRunning else {
            conn.close(code: 1000, reason: "app closed")
            return
        }
        connection = conn
        feed(.connected)
        var closeCode: UInt16?
        for await event in conn.events {
            switch event {
            case .message(let bytes):
                guard g == generation else { continue }
                do {
                    feed(.frame(try FrameCodec.decodeRelayFrame(bytes)))
                } catch {
                    // A frame that does not decode is the relay's bug: skip it, and say so.
                    eventSink.yield(.error(.relay(code: .badFrame, message: "undecodable frame from the relay: \(error)")))
                }
            case .closed(let code, _): closeCode = code
            case .binary, .tooLarge: break
            }
        }
        guard g == generation else { return }
        connection = nil
        feed(.closed(code: closeCode))
    }
}
