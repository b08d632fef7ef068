// swift-tools-version:6.0
// WatchRelay: a headless stand-in for the iPhone ↔ Apple Watch link (see README.md).
// Only the toolchain and Debian's C libraries: no Swift package can be fetched here.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "WatchRelay",
    platforms: [.macOS(.v15), .iOS(.v18), .watchOS(.v11)],
    products: [
        .executable(name: "watchrelay", targets: ["watchrelay"]),
        .library(name: "RelayProtocol", targets: ["RelayProtocol"]),
        .library(name: "RelayCore", targets: ["RelayCore"]),
    ],
    targets: [
        // C libraries from Debian, through system-library targets.
        .systemLibrary(
            name: "CWebSockets", pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),

        // The contract: frames, app payloads, codec, limits. Pure Swift, no Foundation.
        .target(
            name: "RelayProtocol", swiftSettings: strict,
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // The relay as a synchronous state machine.
        .target(name: "RelayCore", dependencies: ["RelayProtocol"], swiftSettings: strict),
        // SQLite persistence (WAL) for the relay.
        .target(
            name: "RelayStore", dependencies: ["RelayCore", "RelayProtocol", "CSQLite", "CCrypto"],
            swiftSettings: strict),
        // The only module with unsafe pointers: lws server and client.
        .target(name: "WebSocketTransport", dependencies: ["CWebSockets"], swiftSettings: strict),
        // RelayCore + RelayStore + transport: `watchrelay serve`.
        .target(
            name: "RelayServer",
            dependencies: ["RelayCore", "RelayStore", "RelayProtocol", "WebSocketTransport"],
            swiftSettings: strict),
        // A WCSession-shaped session over the lws client (phone and watch).
        .target(
            name: "RelayClient", dependencies: ["RelayProtocol", "WebSocketTransport", "RelayStore"],
            swiftSettings: strict),
        // GitHub REST client (URLSession) and the fixture GitHub server.
        .target(
            name: "GitHubAPI", dependencies: ["RelayProtocol", "WebSocketTransport"], swiftSettings: strict),
        // The phone companion: favorites, sync, delete handling, repo requests.
        .target(
            name: "PhoneApp", dependencies: ["RelayClient", "GitHubAPI", "RelayProtocol", "RelayStore"],
            swiftSettings: strict),
        // The headless watch: widget timeline and reload budget, profile detail, renderers.
        .target(
            name: "WatchApp", dependencies: ["RelayClient", "RelayProtocol", "RelayStore", "WebSocketTransport"],
            swiftSettings: strict),
        // Scenario model and runner: relay, GitHub stub, phones and watches in-process, or the
        // relay, phones and watches as `watchrelay` child processes (--processes).
        .target(
            name: "Simulator", dependencies: ["RelayServer", "RelayClient", "PhoneApp", "WatchApp", "GitHubAPI", "RelayProtocol", "WebSocketTransport"],
            swiftSettings: strict),
        .executableTarget(
            name: "watchrelay",
            dependencies: ["RelayServer", "RelayProtocol", "RelayClient", "GitHubAPI", "PhoneApp", "WatchApp", "Simulator", "WebSocketTransport"],
            swiftSettings: strict),

        // Helpers shared by the test targets (Tests/TestSupport): waits that never block a
        // cooperative thread, timeouts, temporary directories, child-process output, raw TCP
        // sockets, an in-process relay. It uses RelayServer and WebSocketTransport's
        // LockedState; only test targets depend on it, never a product target.
        .target(
            name: "TestSupport", dependencies: ["RelayServer", "WebSocketTransport"], path: "Tests/TestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "RelayProtocolTests", dependencies: ["RelayProtocol", "CWebSockets", "CSQLite", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayCoreTests", dependencies: ["RelayCore", "RelayProtocol", "WebSocketTransport", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayStoreTests", dependencies: ["RelayStore", "RelayCore", "RelayProtocol", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "WebSocketTransportTests", dependencies: ["WebSocketTransport", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "RelayServerTests",
            dependencies: ["RelayServer", "RelayCore", "RelayProtocol", "WebSocketTransport", "RelayStore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayClientTests",
            dependencies: ["RelayClient", "RelayServer", "RelayProtocol", "WebSocketTransport", "RelayStore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "GitHubAPITests", dependencies: ["GitHubAPI", "RelayProtocol", "WebSocketTransport", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "PhoneAppTests",
            dependencies: ["PhoneApp", "RelayClient", "GitHubAPI", "RelayServer", "RelayProtocol", "WebSocketTransport", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "WatchAppTests", dependencies: ["WatchApp", "RelayClient", "RelayServer", "RelayProtocol", "TestSupport"],
            exclude: ["Golden"], swiftSettings: strict),
        .testTarget(
            name: "SimulatorTests", dependencies: ["Simulator", "WebSocketTransport", "TestSupport"], swiftSettings: strict),
    ]
)

#if os(Linux)
// Apple's WidgetKit timeline API (TimelineProvider, Timeline, WidgetCenter, WidgetFamily…),
// WidgetKit's reload rules as a state machine, and a host that runs a widget's day on a
// virtual clock. Linux only: on Apple platforms the real WidgetKit is there and would clash.
// The watch's favorites widget is built on it, and so are the examples in Examples/.
// AppIntents: just what a widget's configuration intent uses (WidgetConfigurationIntent,
// @Parameter, LocalizedStringResource, IntentDescription), so Xcode's AppIntent widget
// template compiles unchanged.
package.products.append(.library(name: "WidgetKit", targets: ["WidgetKit"]))
package.products.append(.library(name: "AppIntents", targets: ["AppIntents"]))
package.targets.append(contentsOf: [
    .target(name: "AppIntents", swiftSettings: strict),
    .target(name: "WidgetKit", dependencies: ["AppIntents", "RelayProtocol", "WebSocketTransport"], swiftSettings: strict),
    .testTarget(
        name: "WidgetKitTests", dependencies: ["WidgetKit", "AppIntents", "WebSocketTransport"], swiftSettings: strict),
    // Examples/: widgets a developer would copy, each a provider plus the app code that feeds
    // it, and the tests that run their day under WidgetKit's rules.
    .target(
        name: "StaleFavoritesWidget", dependencies: ["WidgetKit", "WebSocketTransport"],
        path: "Examples/StaleFavoritesWidget", swiftSettings: strict),
    .target(
        name: "BudgetBurnWidget", dependencies: ["WidgetKit", "WebSocketTransport"], path: "Examples/BudgetBurnWidget",
        swiftSettings: strict),
    .testTarget(
        name: "WidgetExamplesTests", dependencies: ["StaleFavoritesWidget", "BudgetBurnWidget", "WidgetKit"],
        path: "Examples/WidgetExamplesTests", swiftSettings: strict),
])
for name in ["WatchApp", "WatchAppTests", "Simulator"] {
    package.targets.first { $0.name == name }?.dependencies.append(contentsOf: ["WidgetKit", "AppIntents"])
}
#endif
