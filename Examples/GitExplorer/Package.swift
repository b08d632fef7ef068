// swift-tools-version:6.2
// GitExplorer's WatchConnectivity code (the seed app), built on Linux against WatchRelay's
// WatchConnectivity module and run as two processes through the relay. The sources are written
// as for iOS/watchOS; on Apple platforms this manifest is not used (Xcode builds the app).
import PackageDescription

// Xcode 26's default for new app targets: everything not marked otherwise is main-actor isolated.
// It is what made the seed's delegate crash; the example keeps it to show the fix holds.
let appSettings: [SwiftSetting] = [
    .defaultIsolation(MainActor.self),
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "GitExplorer",
    dependencies: [.package(name: "WatchRelay", path: "../..")],
    targets: [
        // The payload both apps share (the seed's GithubUser).
        .target(name: "GitExplorerModels", swiftSettings: appSettings),
        // `#if os(iOS)` can't be switched on Linux: the phone target defines WATCHRELAY_IOS and
        // the sources test `os(iOS) || WATCHRELAY_IOS` (README, "Test your own app").
        .executableTarget(
            name: "GitExplorerPhone",
            dependencies: ["GitExplorerModels", .product(name: "WatchConnectivity", package: "WatchRelay")],
            swiftSettings: appSettings + [.define("WATCHRELAY_IOS")]),
        .executableTarget(
            name: "GitExplorerWatch",
            dependencies: ["GitExplorerModels", .product(name: "WatchConnectivity", package: "WatchRelay")],
            swiftSettings: appSettings + [.define("WATCHRELAY_WATCHOS")]),
        // The seed's service before its fix (no `nonisolated`): it activates and dies the way
        // the iOS app did. Kept to show the failure; not something to copy.
        .executableTarget(
            name: "SeedCrash",
            dependencies: ["GitExplorerModels", .product(name: "WatchConnectivity", package: "WatchRelay")],
            swiftSettings: appSettings + [.define("WATCHRELAY_IOS")]),
        // Handler patterns of iOS apps that need Apple's handler types (not `Sendable`): a
        // protocol over WCSession, a nonisolated connector capturing `self`, a stored handler.
        .executableTarget(
            name: "HandlerPatterns",
            dependencies: [.product(name: "WatchConnectivity", package: "WatchRelay")],
            swiftSettings: appSettings + [.define("WATCHRELAY_IOS")]),
    ]
)
