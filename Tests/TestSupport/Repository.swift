import Foundation

/// The root of this checkout (the folder holding `Package.swift`), found from this file's path.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The fixture GitHub catalog of this checkout, `Simulator/fixtures/github`.
public let fixturesDirectory = repositoryRoot.appendingPathComponent("Simulator/fixtures/github").path

/// The `watchrelay` executable built next to the test bundle (`swift build --build-tests`
/// builds both); the path, whether or not the file exists.
public var watchrelayBinary: String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // The bundle may be `…/debug/WatchRelayPackageTests.xctest` (a file) on Linux.
    if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
    return directory.appendingPathComponent("watchrelay").path
}
