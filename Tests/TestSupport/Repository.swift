import Foundation

/// The root of this checkout (the folder holding `Package.swift`), found from this file's path.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The fixture GitHub catalog of this checkout, `Simulator/fixtures/github`.
public let fixturesDirectory = repositoryRoot.appendingPathComponent("Simulator/fixtures/github").path
