import Foundation
import Synchronization

/// The relays the benchmark measures: ours and the three peers.
enum BenchTarget: String, CaseIterable, Codable, Sendable {
    /// `watchrelay serve`.
    case watchrelay
    /// `Benchmarks/baseline/relay.c`: the raw libwebsockets relay, this library's ceiling.
    case lwsC = "lws-c"
    /// `Benchmarks/python/relay.py` on the PyPI `websockets` package.
    case python = "python-websockets"
    /// Debian's mosquitto 2.0.11 (embeds lws 4.1.6), MQTT over WebSockets.
    case mosquitto

    /// The generator dialect for this relay.
    var dialect: BenchDialect {
        switch self {
        case .watchrelay: .watchRelay
        case .lwsC, .python: .pathPairing
        case .mosquitto: .mqtt
        }
    }

    /// The peers, in report order.
    static let peers: [BenchTarget] = [.lwsC, .python, .mosquitto]
}

/// Where the relays' programs are (defaults relative to the repository root).
struct BenchPaths: Sendable {
    /// The relay measured as `watchrelay`: an executable that takes `serve` and its options.
    /// Default: `watchrelay-relay` beside this executable (the relay alone, as deployed), else
    /// this executable.
    var watchrelay: String
    var cRelay = "Benchmarks/baseline/build/relay"
    var pythonRelay = "Benchmarks/python/relay.py"
    var python = "python3"
    var mosquitto = "/usr/sbin/mosquitto"
    var mosquittoTemplate = "Benchmarks/mosquitto/mosquitto.conf.in"

    init() {
        let this = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let relay = URL(fileURLWithPath: this).deletingLastPathComponent().appendingPathComponent("watchrelay-relay").path
        watchrelay = FileManager.default.isExecutableFile(atPath: relay) ? relay : this
    }

    /// Why `target` cannot run here, or nil if its files exist.
    func missing(_ target: BenchTarget) -> String? {
        let files: [String] =
            switch target {
            case .watchrelay: [watchrelay]
            case .lwsC: [cRelay]
            case .python: [pythonRelay]
            case .mosquitto: [mosquitto, mosquittoTemplate]
            }
        guard let absent = files.first(where: { !FileManager.default.fileExists(atPath: $0) }) else { return nil }
        let hint =
            switch target {
            case .lwsC: " (make bench builds it)"
            case .mosquitto: " (EXTRA_DEB_PACKAGES=mosquitto scripts/install-deps.sh)"
            default: ""
            }
        return "\(absent) not found\(hint)"
    }
}

/// One relay process started for one scenario, pinned to the relay core.
struct BenchRelay: Sendable {
    /// Numbers the relays started by this process.
    private static let serial = Atomic<Int>(0)

    let target: BenchTarget
    /// What the generator connects to.
    let url: String
    let child: BenchChild
    var pid: Int32 { child.pid }

    /// Starts `target` on a free port with fresh state in `directory`.
    ///
    /// - Parameters:
    ///   - sync: the SQLite synchronous mode of `watchrelay serve` (`full`, `normal`, `off`).
    ///   - tag: distinguishes the files of successive relays in `directory`.
    ///   - database: `watchrelay serve`'s store file instead of a fresh one (a restarted relay).
    ///   - startTimeout: how long the relay may take to print its URL (a large store loads first).
    ///   - rxBufferBytes: `--rx-buffer-bytes` of `watchrelay serve` and of the C relay (nil: their
    ///     default, 16384); the Python relay and mosquitto have no such setting.
    static func start(
        _ target: BenchTarget, paths: BenchPaths, cpu: Int, directory: String, tag: String, sync: String = "full",
        database: String? = nil, startTimeout: Duration = .seconds(15), rxBufferBytes: Int? = nil
    ) async throws -> BenchRelay {
        let rxBuffer = rxBufferBytes.map { ["--rx-buffer-bytes", String($0)] } ?? []
        // A serial number keeps every relay's files apart: a database left by an earlier point
        // or run would preload its pairs into the next relay.
        let name = "\(target.rawValue)-\(tag)-\(serial.add(1, ordering: .relaxed).newValue)"
        switch target {
        case .watchrelay:
            let child = try BenchChild(
                name: name, executable: paths.watchrelay,
                arguments: [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--db", database ?? "\(directory)/\(name).db", "--sync", sync,
                    "--log-level", "warn",
                    // Every bench client is on 127.0.0.1, in numbers past the default quotas.
                    "--quota-connections", "1000000", "--quota-connections-per-address", "1000000",
                    "--quota-direction-items", "100000000", "--quota-direction-bytes", "1099511627776",
                    "--quota-relay-bytes", "1099511627776",
                ] + rxBuffer, cpu: cpu, directory: directory)
            return try await started(target, child, timeout: startTimeout)
        case .lwsC:
            let child = try BenchChild(
                name: name, executable: paths.cRelay, arguments: ["--host", "127.0.0.1", "--port", "0"] + rxBuffer, cpu: cpu,
                directory: directory)
            return try await started(target, child)
        case .python:
            let child = try BenchChild(
                name: name, executable: paths.python,
                arguments: [paths.pythonRelay, "--host", "127.0.0.1", "--port", "0"], cpu: cpu, directory: directory)
            return try await started(target, child)
        case .mosquitto:
            let (wsPort, tcpPort) = (try BenchPorts.free(), try BenchPorts.free())
            let template = try String(contentsOfFile: paths.mosquittoTemplate, encoding: .utf8)
            let config = template.replacingOccurrences(of: "@WS_PORT@", with: String(wsPort))
                .replacingOccurrences(of: "@TCP_PORT@", with: String(tcpPort))
            let configPath = "\(directory)/\(name).conf"
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            let child = try BenchChild(
                name: name, executable: paths.mosquitto, arguments: ["-c", configPath], cpu: cpu, directory: directory)
            do {
                try await child.waitForPort(wsPort)
            } catch {
                await child.stop()
                throw error
            }
            return BenchRelay(target: target, url: "ws://127.0.0.1:\(wsPort)/mqtt", child: child)
        }
    }

    /// Reads the URL the child prints first; stops the child if it never comes.
    private static func started(
        _ target: BenchTarget, _ child: BenchChild, timeout: Duration = .seconds(15)
    ) async throws -> BenchRelay {
        do {
            let line = try await child.firstLine(timeout: timeout)
            guard line.hasPrefix("ws://") else {
                throw BenchError.setup("\(child.name) printed '\(line)' instead of its URL")
            }
            return BenchRelay(target: target, url: line, child: child)
        } catch {
            await child.stop()
            throw error
        }
    }

    /// The relay's RSS in KiB now (0 if it is gone).
    var rssKiB: Int { BenchSystem.rssKiB(pid: pid) ?? 0 }

    /// Stops the relay (SIGTERM, then SIGKILL after 5 s).
    func stop() async {
        await child.stop()
    }
}
