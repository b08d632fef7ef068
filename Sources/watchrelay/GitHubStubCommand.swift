import CLIArguments
import Foundation
import GitHubAPI
import Primitives
import RelayCommand
import RelayServer

/// `watchrelay github-stub`: serve the fixture GitHub API until SIGINT, SIGTERM or SIGHUP.
enum GitHubStubCommand {
    static let help = """
        USAGE: watchrelay github-stub [options]

        Serves the fixture GitHub REST API (GET /users/{login}, GET /users/{login}/repos with
        Link pagination, ETag/304, rate-limit headers, GitHub's 404 and 403 bodies) from a
        fixture catalog (compiled into the binary, or --fixtures DIR). Prints its base URL as the first line of standard output (with
        --port 0, the chosen port). SIGINT, SIGTERM and SIGHUP stop it and exit 0.

        OPTIONS:
          --fixtures DIR        fixture directory with users/ and repos/ (default: the catalog
                                of Simulator/fixtures/github compiled into the binary)
          --port PORT           port, 0 = any free port (default 8766)
          --host HOST           interface to bind (default 127.0.0.1)
          --rate-limit N        allow N requests per one-hour window, then 403 (default: no limit)
          --log-level LEVEL     debug, info, warn, error (default info)
          -h, --help            show this help
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let fixtures = try args.string("fixtures")
        let catalog = try catalog(fixtures)
        let port = try args.int("port", in: 0...65535) ?? 8766
        let host = try args.string("host") ?? "127.0.0.1"
        let rateLimit = try args.int("rate-limit", in: 0...1_000_000).map { GitHubStubRateLimit(limit: $0) }
        let log = try CLI.logger(&args, component: "github-stub")
        try args.rejectUnknown()

        let termination = await TerminationSignal.install()  // before the URL line a script waits for
        let server = try GitHubStubServer.start(catalog: catalog, port: port, host: host, rateLimit: rateLimit)
        StandardOutput.writeLine(server.baseURL.absoluteString)
        log.info(
            "serving GitHub fixtures", ("url", server.baseURL.absoluteString), ("fixtures", fixtures ?? "embedded"),
            ("users", "\(server.catalog.accounts.count)"), ("rate_limit", rateLimit.map { "\($0.limit)/h" } ?? "none"))
        await termination.wait()
        let counters = server.counters
        await server.stop()
        log.info(
            "stopped", ("requests", "\(counters.requests)"), ("not_modified", "\(counters.notModified)"),
            ("rate_limited", "\(counters.rateLimited)"))
        return 0
    }

    /// The fixture catalog: loaded from `explicit` if given (it must exist), else the one
    /// compiled into the binary, so a copied binary works from any directory.
    static func catalog(_ explicit: String?) throws -> GitHubFixtureCatalog {
        guard let explicit else { return try GitHubFixtureCatalog.embedded() }
        return try GitHubFixtureCatalog.load(directory: try checkedFixturesDirectory(explicit))
    }

    /// `path`, a fixture directory given with `--fixtures` (it must hold `users/`).
    private static func checkedFixturesDirectory(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path + "/users") else {
            throw Arguments.UsageError(description: "--fixtures \(path) has no users/ directory")
        }
        return path
    }

    /// The fixture directory: `explicit` if given (it must exist), else `Simulator/fixtures/github`
    /// under the working directory or under an ancestor of the executable (a build directory),
    /// else nil (use the catalog compiled into the binary).
    static func fixturesDirectory(_ explicit: String?) throws -> String? {
        if let explicit { return try checkedFixturesDirectory(explicit) }
        let manager = FileManager.default
        let relative = "Simulator/fixtures/github"
        var candidates = [manager.currentDirectoryPath + "/" + relative]
        let executable = (try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while dir.path != "/" {
            candidates.append(dir.path + "/" + relative)
            dir = dir.deletingLastPathComponent()
        }
        return candidates.first(where: { manager.fileExists(atPath: $0 + "/users") })
    }
}
