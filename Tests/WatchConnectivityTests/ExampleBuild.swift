import Foundation
import TestSupport

/// Builds the child package `Examples/GitExplorer` once per test run, with SwiftPM, into
/// `.build/examples` (cached between runs; `make build-tests` builds it first, so here it is
/// usually a no-op). Its targets use default main-actor isolation (tools-version 6.2).
actor ExampleBuild {
    static let shared = ExampleBuild()

    /// What the build produced: the binaries' directory and SwiftPM's output.
    struct Products: Sendable {
        var binDirectory: String
        var log: String
    }

    private var built: Task<Products, any Error>?

    func products() async throws -> Products {
        if let built { return try await built.value }
        let task = Task { try await Self.build() }
        built = task
        return try await task.value
    }

    private static func build() async throws -> Products {
        let package = repositoryRoot.appendingPathComponent("Examples/GitExplorer").path
        let scratch = repositoryRoot.appendingPathComponent(".build/examples").path
        let swift = ProcessInfo.processInfo.environment["SWIFT"] ?? "swift"
        let common = ["--package-path", package, "--scratch-path", scratch]
        let build = try AppProcess("swift build (Examples/GitExplorer)", executable: "/usr/bin/env", arguments: [swift, "build"] + common)
        let result = try await build.exit(within: 900)
        let log = build.takeLines().joined(separator: "\n") + "\n" + result.stderr
        guard result.status == 0, !result.signalled else {
            throw TestFailure("swift build of Examples/GitExplorer failed (\(result.status)):\n\(log.suffix(4000))")
        }
        let show = try AppProcess("swift build --show-bin-path", executable: "/usr/bin/env", arguments: [swift, "build", "--show-bin-path"] + common)
        let bin = try await show.line(startingWith: "/", within: 120)
        _ = try await show.exit()
        return Products(binDirectory: bin, log: log)
    }
}
