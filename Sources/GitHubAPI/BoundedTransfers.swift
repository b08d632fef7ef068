import Foundation
import Primitives

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the GitHub client's own URLSession: GETs whose answer is bounded in size and
/// time, and which never follow a redirect to another origin.
///
/// A hostile or broken server (the black-box probe of the phone) could otherwise take the phone
/// down or its token away: an endless or decompression-bomb body was buffered whole (1 GB/s of
/// memory, the machine's 24 GB in a minute), a body sent a byte a second held the phone's console
/// for as long as the server went on (only silence times a request out), and a redirect to
/// another host was followed with the `Authorization` header.
///
/// - A body past ``maxBodyBytes`` ends the call at once with ``Failure/tooLarge(_:)``: at the
///   response when its `Content-Length` is over it, else when the body (chunked, or decompressed)
///   grows past it. Either way the bytes that still come are dropped, not kept (corelibs ignores
///   a `.cancel` disposition, so the body still arrives).
/// - ``deadline`` after the call began it ends with ``Failure/tooSlow(_:)``.
/// - A redirect to another scheme, host or port is not followed: the 3xx is the answer.
///
/// Like ``URLSession/dataSafelyCancellable(for:)``, an ended call never cancels its
/// `URLSessionTask` (corelibs' `cancel()` can deadlock or crash when it races the task's
/// completion): a transfer cut short runs on in the background, its bytes dropped as they come,
/// until the server stops or the request's inactivity timeout. It keeps one of the session's
/// ``connectionsPerHost`` connections meanwhile, so with ``maxStillArriving`` such transfers
/// running a call fails at once (``Failure/stillArriving(_:)``) instead of queueing behind them
/// for its whole deadline (a review found six abandoned drips made every later call time out).
final class BoundedTransfers: NSObject, URLSessionDataDelegate, Sendable {
    /// Why a transfer ended early, or did not start.
    enum Failure: Error, Equatable {
        /// The body passed this many bytes.
        case tooLarge(Int)
        /// The whole answer took longer than this.
        case tooSlow(Duration)
        /// This many transfers cut short earlier are still arriving.
        case stillArriving(Int)
    }

    /// The session's connections to one host (corelibs' default, set explicitly).
    static let connectionsPerHost = 6
    /// Transfers cut short that may run on before calls are refused: half the connections, so
    /// calls that are answered keep the other half.
    static let maxStillArriving = connectionsPerHost / 2

    private struct Transfer {
        var data = Data()
        var response: URLResponse?
        var finish: (@Sendable (Result<(Data, URLResponse), any Error>) -> Void)?
    }

    let maxBodyBytes: Int
    let deadline: Duration
    private let transfers = LockedState<[Int: Transfer]>([:])

    init(maxBodyBytes: Int, deadline: Duration) {
        self.maxBodyBytes = maxBodyBytes
        self.deadline = deadline
    }

    /// `GET request` on `session` (whose delegate is this object): its body and response.
    func data(for request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        // Whoever comes first resumes the caller: the transfer, the deadline or a cancellation.
        // A transfer that ended early has no `finish` until its task completes.
        let stillArriving = transfers.withLock { $0.values.count { $0.finish == nil } }
        if stillArriving >= Self.maxStillArriving { throw Failure.stillArriving(stillArriving) }
        let outcome = OnceContinuation()
        let task = session.dataTask(with: request)
        transfers.withLock { $0[task.taskIdentifier] = Transfer(finish: { outcome.resume($0) }) }
        let deadline = self.deadline
        let timer = Task {
            try? await Task.sleep(for: deadline)
            if !Task.isCancelled { self.end(task.taskIdentifier, .failure(Failure.tooSlow(deadline))) }
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                outcome.set(continuation)
                task.resume()
            }
        } onCancel: {
            self.end(task.taskIdentifier, .failure(URLError(.cancelled)))
        }
    }

    /// Ends transfer `id` with `result` if it has not ended; later bytes of it are dropped.
    private func end(_ id: Int, _ result: Result<(Data, URLResponse), any Error>) {
        let finish = transfers.withLock { t -> (@Sendable (Result<(Data, URLResponse), any Error>) -> Void)? in
            guard let f = t[id]?.finish else { return nil }
            t[id]?.finish = nil
            t[id]?.data = Data()
            return f
        }
        finish?(result)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        transfers.withLock { $0[id]?.response = response }
        if response.expectedContentLength > Int64(maxBodyBytes) {
            end(id, .failure(Failure.tooLarge(maxBodyBytes)))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let over = transfers.withLock { t -> Bool in
            guard t[id]?.finish != nil else { return false }  // ended: dropped
            t[id]?.data.append(data)
            return (t[id]?.data.count ?? 0) > maxBodyBytes
        }
        if over { end(id, .failure(Failure.tooLarge(maxBodyBytes))) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // The token goes only where the first request went: another origin gets the 3xx.
        guard let from = task.originalRequest?.url, let to = request.url, GitHubRESTClient.sameOrigin(from, to) else {
            completionHandler(nil)
            return
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        let transfer = transfers.withLock { $0.removeValue(forKey: id) }
        guard let transfer, let finish = transfer.finish else { return }
        if let error {
            finish(.failure(error))
        } else if let response = transfer.response ?? task.response {
            finish(.success((transfer.data, response)))
        } else {
            finish(.failure(URLError(.badServerResponse)))
        }
    }
}
