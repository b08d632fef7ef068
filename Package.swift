// swift-tools-version:6.2
// WatchRelay: a headless stand-in for the iPhone ↔ Apple Watch link (see README.md).
// Only the toolchain and Debian's C libraries: no Swift package can be fetched here.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // A function per section in release builds: the relay's linker orders them (watchrelay-relay).
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
]

// The relay's own modules: the compiler flags every unsafe construct in them (a warning, and
// the build has none), so an unsafe pointer cannot slip in outside WebSocketTransport unseen
// (DESIGN.md). The few `unsafe` expressions left are marked and each says why it is sound.
let memorySafe: [SwiftSetting] = strict + [.strictMemorySafety()]

// Apple's WatchConnectivity API over RelayClient, so code written for iOS/watchOS compiles
// unchanged with `import WatchConnectivity`. Linux only: on Apple platforms the SDK's module
// of that name stands, and a package module of the same name would shadow it.
#if os(Linux)
let watchConnectivityProducts: [Product] = [
    .library(name: "WatchConnectivity", targets: ["WatchConnectivity"]),
    .library(name: "WatchRelayTesting", targets: ["WatchRelayTesting"]),
]
let watchConnectivityCLI: [Target.Dependency] = ["WatchConnectivity"]
let watchConnectivityTargets: [Target] = [
    .target(
        name: "WatchConnectivity", dependencies: ["RelayClient", "RelayProtocol", "Primitives", "SQLite"],
        swiftSettings: strict),
    // A relay in an app's test process and a paired phone and watch on it (for apps' own tests).
    .target(
        name: "WatchRelayTesting", dependencies: ["WatchConnectivity", "RelayServer", "Primitives"],
        swiftSettings: strict),
    .testTarget(
        name: "WatchRelayTestingTests", dependencies: ["WatchRelayTesting", "WidgetKit", "wc-probe"], swiftSettings: strict),
    // A WatchConnectivity app the tests start as a child process (and kill -9).
    .executableTarget(
        name: "wc-probe", dependencies: ["WatchConnectivity"], path: "Tests/WatchConnectivityProbe",
        swiftSettings: strict),
    .testTarget(
        name: "WatchConnectivityTests",
        dependencies: ["WatchConnectivity", "RelayClient", "RelayServer", "RelayProtocol", "TestSupport", "Primitives"],
        swiftSettings: strict),
]
#else
let watchConnectivityProducts: [Product] = []
let watchConnectivityTargets: [Target] = []
let watchConnectivityCLI: [Target.Dependency] = []
#endif

let package = Package(
    name: "WatchRelay",
    platforms: [.macOS(.v15), .iOS(.v18), .watchOS(.v11)],
    products: [
        .executable(name: "watchrelay", targets: ["watchrelay"]),
        .executable(name: "watchrelay-relay", targets: ["watchrelay-relay"]),
        .library(name: "RelayProtocol", targets: ["RelayProtocol"]),
        .library(name: "RelayCore", targets: ["RelayCore"]),
        // For the fuzzer (Fuzz/), which decodes the app's payloads too.
        .library(name: "GitExplorerPayloads", targets: ["GitExplorerPayloads"]),
    ] + watchConnectivityProducts,
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
        // hiredis without pkgConfig: its .pc cflags (-D_FILE_OFFSET_BITS=64) make SwiftPM warn.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),

        // The bottom: LockedState (a Mutex ThreadSanitizer can see, through the CThreadSanitizer
        // shim), the one wall Clock and the table hash of counter-issued ids. No Foundation;
        // every other module may import it.
        .systemLibrary(name: "CThreadSanitizer"),
        // glibc's malloc.h (mallopt), for the relay process's one malloc arena (RelayCommand).
        .systemLibrary(name: "CMalloc"),
        .target(name: "Primitives", dependencies: ["CThreadSanitizer"], swiftSettings: strict),
        // A manual Clock that moves only when told: tests and the simulator (`watch --manual-clock`)
        // only, never a product module.
        .target(name: "TestClock", dependencies: ["Primitives", "RelayProtocol"], swiftSettings: strict),
        // The relay's contract alone: frames, codec, JSON, limits, Timestamp. Pure Swift, no Foundation.
        .target(
            // `Lifetimes`: the JSON parser reads a `Span` it must not outlive (`@_lifetime`).
            name: "RelayProtocol", dependencies: ["Primitives"],
            swiftSettings: memorySafe + [.enableExperimentalFeature("Lifetimes")],
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // GitExplorer's app payloads (User, Repo, FavoritesSnapshot, repos requests and replies):
        // what the phone and the watch put in `Payload`s; the relay never reads them.
        .target(name: "GitExplorerPayloads", dependencies: ["RelayProtocol"], swiftSettings: strict),
        // The SQLite wrapper (connection, statements, rows, migrations, file errors) every store
        // is built on: the relay's, the phone's, the watch's, a session's.
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strict),
        // The relay as a synchronous state machine.
        .target(name: "RelayCore", dependencies: ["RelayProtocol", "Primitives"], swiftSettings: memorySafe),
        // The relay's durable state (WAL) on the SQLite module.
        .target(
            name: "RelayStore", dependencies: ["RelayCore", "RelayProtocol", "CCrypto", "SQLite"],
            swiftSettings: memorySafe),
        // A Redis client (hiredis) on a thread of its own, with pipelining; errors as values.
        .target(name: "RedisClient", dependencies: ["CHiredis", "Primitives"], swiftSettings: strict),
        // The relay's durable state in Redis (`serve --store redis://…`), behind RelayStorage.
        .target(
            name: "RelayRedisStore", dependencies: ["RelayCore", "RelayProtocol", "RedisClient"],
            swiftSettings: memorySafe),
        // The only module with unsafe pointers: lws server and client.
        .target(name: "WebSocketTransport", dependencies: ["CWebSockets", "Primitives"], swiftSettings: strict),
        // The browser console and fault plan of `serve --console`: page, JSON API, token.
        .target(
            name: "RelayConsole", dependencies: ["RelayCore", "RelayProtocol", "WebSocketTransport", "Primitives"],
            swiftSettings: strict),
        // RelayCore + RelayStore + transport: `watchrelay serve`.
        .target(
            name: "RelayServer",
            dependencies: ["RelayCore", "RelayStore", "RelayRedisStore", "RedisClient", "RelayProtocol", "WebSocketTransport", "RelayConsole", "Primitives", "SQLite"],
            // The engine runs every message on the service thread through a few class
            // properties; in a release build their run-time exclusivity checks were ~3 % of the
            // relay per 64 B message (swift_beginAccess and its thread-local access set, perf
            // 2026-12-03). Debug and TSan builds (make test, make test-tsan) keep the checks.
            // An app compiles this target only through WatchRelayTesting (its test target's
            // in-process relay), and only a release build of its tests runs the relay unchecked,
            // as this package's release binaries do.
            swiftSettings: memorySafe + [
                .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
            ]),
        // A WCSession-shaped session over the lws client (phone and watch).
        .target(
            name: "RelayClient", dependencies: ["Primitives", "RelayProtocol", "WebSocketTransport", "SQLite"],
            swiftSettings: strict),
        // A relay core and session cores wired together in one actor: no sockets, no threads
        // (tests and the simulator). The only client-side module that links RelayCore.
        .target(
            name: "InMemoryRelay", dependencies: ["RelayCore", "RelayClient", "RelayProtocol"], swiftSettings: strict),
        // GitHub REST client (URLSession) and the fixture GitHub server, with the fixture
        // catalog (Simulator/fixtures/github) compiled in by the EmbedFixtures plugin.
        .target(
            name: "GitHubAPI", dependencies: ["RelayProtocol", "WebSocketTransport", "GitExplorerPayloads", "Primitives"], swiftSettings: strict,
            plugins: ["EmbedFixtures"]),
        .executableTarget(name: "FixtureEmbedder", swiftSettings: strict),
        .plugin(name: "EmbedFixtures", capability: .buildTool(), dependencies: ["FixtureEmbedder"]),
        // The phone companion: favorites, sync, delete handling, repo requests.
        .target(
            name: "PhoneApp", dependencies: ["RelayClient", "GitHubAPI", "RelayProtocol", "GitExplorerPayloads", "SQLite", "Primitives"],
            swiftSettings: strict),
        // The headless watch: widget timeline and reload budget, profile detail, renderers.
        .target(
            name: "WatchApp", dependencies: ["RelayClient", "RelayProtocol", "GitExplorerPayloads", "Primitives", "SQLite"],
            swiftSettings: strict),
        // Scenario model and runner: relay, GitHub stub, phones and watches in-process, or the
        // relay, phones and watches as `watchrelay` child processes (--processes).
        .target(
            name: "Simulator", dependencies: ["RelayServer", "RelayConsole", "RedisClient", "InMemoryRelay", "RelayCore", "PhoneApp", "WatchApp", "GitHubAPI", "RelayProtocol", "Primitives", "TestClock", "LineProtocol"],
            swiftSettings: strict),
        // `watchrelay`'s option parser (`--name value`, flags, usage errors), shared with the benchmark.
        .target(name: "CLIArguments", swiftSettings: strict),
        // The `--machine` line protocol's requests, responses and events: both halves, the
        // `phone|watch --machine` children and the simulator's MachineChannel, speak it.
        .target(name: "LineProtocol", dependencies: ["RelayProtocol", "Primitives"], swiftSettings: strict),
        // The benchmark (`watchrelay bench`, a thin entry): load generator, peers, pacing, report.
        .target(name: "WatchRelayBench", dependencies: ["CLIArguments", "Primitives", "RelayCore", "RelayProtocol", "RelayServer", "Simulator", "WebSocketTransport"], swiftSettings: strict),
        // `watchrelay serve` and the CLI pieces every subcommand shares (logging, signals, stdout).
        .target(
            name: "RelayCommand", dependencies: ["CLIArguments", "CMalloc", "Primitives", "RelayConsole", "RelayCore", "RelayProtocol", "RedisClient", "RelayServer", "SQLite"],
            swiftSettings: strict),
        // The relay alone (`watchrelay serve` without the phone, watch, GitHub and bench code):
        // what a deployment or CI runs. A release build links the Swift runtime and Foundation
        // statically, so the process maps only the code it uses (BENCHMARKS.md, "Memory"), with
        // lld, which puts the functions the relay runs side by side: the list in
        // Benchmarks/relay-symbol-order.txt (scripts/relay-symbol-order.py), each in a section of
        // its own (`-function-sections`, in `strict`). The kernel maps code 64 KiB around each
        // fault, so scattered it cost 2 MiB more of RSS (BENCHMARKS.md, "in the order it runs").
        .executableTarget(
            name: "watchrelay-relay", dependencies: ["Primitives", "RelayCommand"],
            swiftSettings: strict,
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xclang-linker", "-no-pie", "-use-ld=lld",
                        "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Benchmarks/relay-symbol-order.txt",
                        // A name the code no longer has is skipped: a stale list costs memory, not the build.
                        "-Xlinker", "--no-warn-symbol-ordering",
                    ], .when(configuration: .release)),
                // What Foundation's static archives need: the modules here are compiled against the
                // dynamic Foundation, whose objects do not name these for the linker.
                .linkedLibrary("CoreFoundation", .when(configuration: .release)),
                .linkedLibrary("_FoundationCollections", .when(configuration: .release)),
                .linkedLibrary("_FoundationCShims", .when(configuration: .release)),
                .linkedLibrary("_FoundationICU", .when(configuration: .release)),
            ]),
        .executableTarget(
            name: "watchrelay",
            dependencies: ["RelayCommand", "RelayServer", "RelayConsole", "RelayProtocol", "RelayClient", "GitHubAPI", "PhoneApp", "WatchApp", "Simulator", "Primitives", "SQLite", "TestClock", "CLIArguments", "LineProtocol", "WatchRelayBench"]
                + watchConnectivityCLI,
            swiftSettings: strict),

        // Helpers shared by the test targets (Tests/TestSupport): waits that never block a
        // cooperative thread, timeouts, temporary directories, child-process output, raw TCP
        // sockets, an in-process relay. It uses RelayServer and WebSocketTransport's
        // LockedState; only test targets depend on it, never a product target.
        .target(
            name: "TestSupport", dependencies: ["RelayServer", "RelayStore", "RelayCore", "RelayProtocol", "RedisClient", "Primitives"], path: "Tests/TestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "RelayProtocolTests", dependencies: ["RelayProtocol", "CWebSockets", "CSQLite", "TestSupport", "GitExplorerPayloads"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayCoreTests", dependencies: ["RelayCore", "RelayProtocol", "TestSupport", "Primitives"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayStoreTests", dependencies: ["RelayStore", "RelayCore", "RelayProtocol", "TestSupport", "CSQLite", "SQLite"],
            swiftSettings: strict),
        .testTarget(
            name: "RedisClientTests", dependencies: ["RedisClient", "TestSupport", "Primitives"], swiftSettings: strict),
        .testTarget(
            name: "RelayRedisStoreTests",
            dependencies: ["RelayRedisStore", "RedisClient", "RelayStore", "RelayCore", "RelayProtocol", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "WebSocketTransportTests", dependencies: ["WebSocketTransport", "TestSupport", "Primitives"], swiftSettings: strict),
        .testTarget(
            name: "RelayConsoleTests", dependencies: ["RelayConsole", "RelayCore", "RelayProtocol", "WebSocketTransport"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayServerTests",
            dependencies: ["RelayServer", "RelayConsole", "RedisClient", "RelayRedisStore", "RelayCore", "RelayProtocol", "WebSocketTransport", "TestSupport", "GitExplorerPayloads", "Primitives"],
            swiftSettings: strict),
        .testTarget(
            name: "RelayClientTests",
            dependencies: ["RelayClient", "InMemoryRelay", "RelayCore", "RelayServer", "RelayProtocol", "TestSupport", "GitExplorerPayloads", "Primitives"],
            swiftSettings: strict),
        .testTarget(
            name: "GitHubAPITests", dependencies: ["GitHubAPI", "RelayProtocol", "WebSocketTransport", "TestSupport", "GitExplorerPayloads", "Primitives"],
            swiftSettings: strict),
        .testTarget(
            name: "PhoneAppTests",
            dependencies: ["PhoneApp", "InMemoryRelay", "RelayClient", "GitHubAPI", "RelayServer", "RelayProtocol", "WebSocketTransport", "TestSupport", "GitExplorerPayloads", "Primitives", "SQLite"],
            swiftSettings: strict),
        .testTarget(
            name: "WatchAppTests", dependencies: ["WatchApp", "InMemoryRelay", "RelayClient", "RelayConsole", "RelayServer", "RelayProtocol", "TestSupport", "GitExplorerPayloads", "Primitives", "TestClock", "SQLite"],
            exclude: ["Golden"], swiftSettings: strict),
        .testTarget(
            name: "WatchRelayBenchTests", dependencies: ["WatchRelayBench", "RelayProtocol"], swiftSettings: strict),
        .testTarget(
            name: "SimulatorTests", dependencies: ["Simulator", "TestSupport", "GitExplorerPayloads", "LineProtocol", "Primitives", "RelayClient", "RelayProtocol", "WatchApp"], swiftSettings: strict),
    ] + watchConnectivityTargets
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
    .target(name: "WidgetKit", dependencies: ["AppIntents", "RelayProtocol", "Primitives"], swiftSettings: strict),
    .testTarget(
        name: "WidgetKitTests", dependencies: ["WidgetKit", "AppIntents", "Primitives"], swiftSettings: strict),
    // App code as Xcode 26 compiles a new target (Swift 5 mode, main-actor default isolation):
    // WidgetKit's declarations must take it as Apple's do, without a warning.
    .testTarget(
        name: "WidgetKitAppDefaultsTests", dependencies: ["WidgetKit"],
        swiftSettings: [.swiftLanguageMode(.v5), .defaultIsolation(MainActor.self)]),
    // Examples/: widgets a developer would copy, each a provider plus the app code that feeds
    // it, and the tests that run their day under WidgetKit's rules.
    .target(
        name: "StaleFavoritesWidget", dependencies: ["WidgetKit", "Primitives"],
        path: "Examples/StaleFavoritesWidget", swiftSettings: strict),
    .target(
        name: "BudgetBurnWidget", dependencies: ["WidgetKit", "Primitives"], path: "Examples/BudgetBurnWidget",
        swiftSettings: strict),
    .testTarget(
        name: "WidgetExamplesTests", dependencies: ["StaleFavoritesWidget", "BudgetBurnWidget", "WidgetKit"],
        path: "Examples/WidgetExamplesTests", swiftSettings: strict),
    // An iPhone app's and a watch app's WatchConnectivity code and their complication's provider,
    // written from Apple's documentation (every WCSessionDelegate method, WCError matching,
    // the transfers, WidgetCenter); the SwiftUI widget file is left out, as README says. Its
    // tests run both apps against a real relay and the complication under WidgetKit's rules.
    .target(
        name: "WorkoutCompanion", dependencies: ["WatchConnectivity", "WidgetKit"], path: "Examples/WorkoutCompanion",
        exclude: ["WorkoutWidget.swift"], swiftSettings: strict),
    .testTarget(
        name: "WorkoutCompanionTests",
        dependencies: ["WorkoutCompanion", "WatchConnectivity", "WidgetKit", "RelayServer", "TestSupport", "Primitives"],
        path: "Examples/WorkoutCompanionTests", swiftSettings: strict),
])
for (name, modules) in [
    "WatchApp": ["WidgetKit", "AppIntents"], "WatchAppTests": ["WidgetKit"], "Simulator": ["WidgetKit"],
] as [String: [Target.Dependency]] {
    package.targets.first { $0.name == name }?.dependencies.append(contentsOf: modules)
}
#endif
