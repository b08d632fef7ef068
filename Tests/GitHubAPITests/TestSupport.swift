import Foundation
import GitHubAPI
import TestSupport
import Testing
import WebSocketTransport

/// The committed fixture catalog, loaded once.
let fixtureCatalog: GitHubFixtureCatalog = {
    do {
        return try GitHubFixtureCatalog.load(directory: fixturesDirectory)
    } catch {
        fatalError("the committed fixtures do not load: \(error)")
    }
}()

/// Runs `body` and returns the ``GitHubError`` it threw, or records an issue if it did not throw.
func expectGitHubError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> GitHubError? {
    do {
        let value = try await body()
        Issue.record("expected a GitHubError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as GitHubError {
        return error
    } catch {
        Issue.record("expected a GitHubError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension HTTPResponse {
    /// The value of the first header with this name (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }
}
