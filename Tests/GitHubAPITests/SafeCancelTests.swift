import Foundation
import GitHubAPI
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSession.dataSafelyCancellable(for:)`: cancelling a request, at any moment of its life,
/// ends it (answered or cancelled) instead of deadlocking the process, as corelibs'
/// `data(for:)` can when the cancel meets the answer arriving.
@Suite(.timeLimit(.minutes(5)))
struct SafeCancelTests {
    @Test func cancellingAtAnyMomentEndsTheRequest() async throws {
        let stub = try GitHubStubServer.start(catalog: fixtureCatalog)
        let request = URLRequest(url: stub.baseURL.appendingPathComponent("users/octocat"))
        var answered = 0
        var cancelled = 0
        for round in 0..<150 {
            let task = Task { try await URLSession.shared.dataSafelyCancellable(for: request) }
            // From before the request starts to after its answer has arrived.
            if round % 3 != 0 { try await Task.sleep(for: .microseconds((round * 37) % 3_000)) }
            task.cancel()
            let outcome = try await withTimeout(30 * timeoutScale, "cancelled request \(round) to end") {
                await task.result
            }
            switch outcome {
            case .success(let (data, response)):
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(!data.isEmpty)
                answered += 1
            case .failure(let error):
                #expect((error as? URLError)?.code == .cancelled, "round \(round): \(error)")
                cancelled += 1
            }
        }
        #expect(answered + cancelled == 150)
        // Uncancelled, it is a plain GET.
        let (data, response) = try await URLSession.shared.dataSafelyCancellable(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self).contains("octocat"))
        await stub.stop()
    }
}
