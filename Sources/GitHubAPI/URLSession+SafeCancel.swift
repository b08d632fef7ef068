import Foundation
import Primitives

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)`, except that cancelling the calling task can neither deadlock nor crash.
    ///
    /// swift-corelibs-foundation's `data(for:)` cancels its `URLSessionTask` from the Swift task's
    /// cancellation handler, which runs while the runtime holds that task's status lock, and
    /// `URLSessionTask.cancel()` does a `DispatchQueue.sync` onto the session's work queue. If
    /// the work queue is at that moment finishing the same request, it resumes the continuation,
    /// which needs the task's status lock: each side waits for the other, for ever. The phone
    /// companion hung that way in a test run when `shutdown()` cancelled a refresh whose GitHub
    /// answer was just arriving (stacks: `URLSession.CancelState.cancel` under
    /// `swift_task_cancel` on one thread, `_ProtocolClient.urlProtocolDidFinishLoading` resuming
    /// the continuation on the other). Calling `cancel()` from elsewhere is no cure: a cancel
    /// racing the request's completion crashes in corelibs' task registry ("Trying to access a
    /// behaviour for a task that in not in the registry").
    ///
    /// So this never cancels the `URLSessionTask`: a cancelled caller gets
    /// `URLError(.cancelled)` at once, and the request runs out in the background (bounded by
    /// its `timeoutInterval`), its answer dropped.
    public func dataSafelyCancellable(for request: URLRequest) async throws -> (Data, URLResponse) {
        let outcome = OnceContinuation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                outcome.set(continuation)
                dataTask(with: request) { data, response, error in
                    if let error {
                        outcome.resume(.failure(error))
                    } else if let response {
                        outcome.resume(.success((data ?? Data(), response)))
                    } else {
                        outcome.resume(.failure(URLError(.badServerResponse)))
                    }
                }.resume()
            }
        } onCancel: {
            outcome.resume(.failure(URLError(.cancelled)))
        }
    }
}

/// A continuation resumed by whichever comes first: the answer or the caller's cancellation
/// (and, for ``BoundedTransfers``, its limits).
final class OnceContinuation: Sendable {
    private let state = LockedState<(continuation: CheckedContinuation<(Data, URLResponse), any Error>?, early: Result<(Data, URLResponse), any Error>?, done: Bool)>((nil, nil, false))

    /// Stores the continuation, or resumes it at once if the outcome came first (a caller
    /// cancelled before the request started).
    func set(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let early = state.withLock { state -> Result<(Data, URLResponse), any Error>? in
            if let early = state.early {
                state.early = nil
                return early
            }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Resumes with `result` unless something already did (later outcomes are dropped).
    func resume(_ result: Result<(Data, URLResponse), any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<(Data, URLResponse), any Error>? in
            guard !state.done else { return nil }
            state.done = true
            guard let continuation = state.continuation else {
                state.early = result
                return nil
            }
            state.continuation = nil
            return continuation
        }
        continuation?.resume(with: result)
    }
}
