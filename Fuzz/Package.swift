// swift-tools-version:6.0
// libFuzzer targets for the frame decoder and RelayCore's event handling. A package of its
// own so the sanitizer flags never touch the main build:
//   cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
// `make fuzz` builds it and runs it seeded with Protocol/vectors.
import PackageDescription

let package = Package(
    name: "WatchRelayFuzz",
    dependencies: [.package(name: "WatchRelay", path: "..")],
    targets: [
        .executableTarget(
            name: "RelayFuzz",
            dependencies: [
                .product(name: "RelayProtocol", package: "WatchRelay"),
                .product(name: "RelayCore", package: "WatchRelay"),
                .product(name: "GitExplorerPayloads", package: "WatchRelay"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]),
    ]
)
