import CLIArguments
import Foundation
import Primitives
import RedisClient
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import SQLite

/// `watchrelay serve`: run the relay until SIGINT, SIGTERM or SIGHUP.
public enum ServeCommand {
    /// The `--help` text.
    public static let help = """
        USAGE: watchrelay serve [options]

        Runs the relay (WatchConnectivity stand-in) on libwebsockets. Prints the URL it listens
        on as the first line of standard output (with --port 0, the chosen port).
        SIGINT, SIGTERM and SIGHUP close every client with 1001 and exit 0.

        OPTIONS:
          --host HOST                 address, interface name or host name to bind (default
                                      127.0.0.1; a host name binds its first IPv4 address)
          --port PORT                 port, 0 = any free port (default 8765)
          --db PATH                   SQLite database (default watchrelay-relay.db); one relay per
                                      file: a second one on it exits 1 (PATH-lock holds the claim)
          --sync full|normal|off      SQLite synchronous mode (default full: fsync per group commit)
          --store redis://HOST:PORT[/DB]  keep the durable state in Redis database DB (default 0)
                                      instead of the SQLite file (so not with --db or --sync; run
                                      Redis with appendonly yes, appendfsync always: docs/REDIS.md);
                                      the node joins the cluster of the nodes on that Redis: one
                                      leader (a lease) runs the relay, the others forward to it
          --node-id ID                this node's id in the cluster (default: a random one)
          --lease-ttl-ms N            the leader lease's lifetime: how soon another node takes over
                                      from a dead leader (default 5000)
          --single-node               with --store: no lease and no forwarding, the only relay on
                                      that Redis (unguarded: never run two of them on one Redis)
          --exit-on-stdin-eof         also stop at the end of standard input (a parent process that
                                      holds the pipe: when it dies, so does the relay)
          --tls-cert PEM --tls-key PEM   serve wss:// and https://
          --max-frame-bytes N         hard cap on one WebSocket message (default 1048576)
          --max-queued-bytes N        bytes queued to one slow client before close 1008 (default 8388608)
          --rx-buffer-bytes N         lws's receive buffer per connection and largest read,
                                      512...32768 (default 16384): below 4096 it saves memory per
                                      idle connection and costs reads per large message
                                      (BENCHMARKS.md, "The receive buffer")
          --message-bytes N           message/reply payload limit (default 65536)
          --user-info-bytes N         userInfo/complication payload limit (default 65536)
          --context-bytes N           context payload limit (default 262144)
          --reply-timeout-ms N        reply timeout (default 10000)
          --complications-per-day N   complication budget per pair per 24 h (default 50)
          --pairing-code-ttl-s N      pairing code lifetime (default 120)
          --hello-timeout-s N         close a connection that has not said hello after N s with
                                      hello_required and 1008 (default 10)
          --ping-after-s N            ping a silent client after N s (default 30)
          --hangup-after-s N          hang up on a client that sent nothing, not even a pong, for
                                      N s (default ping + 10; must exceed --ping-after-s)
        QUOTAS (past one: error quota_exceeded, nothing stored or delivered; PROTOCOL.md §9):
          --quota-direction-items N   durable items held per pair direction (default 10000)
          --quota-direction-bytes N   their payload bytes per pair direction (default 67108864)
          --quota-relay-bytes N       durable payload bytes held over the relay (default 536870912)
          --quota-pair-replies N      messages of one pair waiting for their reply (default 10000)
          --quota-relay-replies N     messages waiting for their reply over the relay (default 200000)
          --quota-connections N       open connections (default 10000)
          --quota-connections-per-address N   open connections from one address (default 1000)
          --trusted-proxy ADDRS       comma-separated IP addresses of proxies (HAProxy with
                                      `option forwardfor`) whose X-Forwarded-For names the client:
                                      per-address quotas and pairing locks then count the clients
                                      behind them, not the proxy (default: none; the header of any
                                      other peer is ignored)
          --console                   serve the browser console and its fault API at /console; prints
                                      `console: http://HOST:PORT/console?token=TOKEN` on standard error
                                      (on a cluster, every node's; the leading node's shows the devices)
          --console-token TOKEN       the console's token, of A-Z a-z 0-9 - . _ ~ (default: a fresh
                                      random one)
          --console-allow-insecure    allow the console on a non-loopback interface without TLS
          --log-level LEVEL           debug, info, warn, error (default info)
          --version                   print the release, the protocol and the libraries loaded
          -h, --help                  show this help
        """

    /// Runs the relay with `argv` (the options after `serve`) until SIGINT, SIGTERM or SIGHUP; the exit code.
    public static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(
            argv, booleanFlags: ["help", "version", "exit-on-stdin-eof", "console", "console-allow-insecure", "single-node"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        if args.flag("version") {
            // `watchrelay serve --version` and `watchrelay-relay --version`: the executable's name.
            StandardOutput.writeLine(CLI.versionLine(program: URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent))
            return 0
        }
        let stdinEnds = args.flag("exit-on-stdin-eof")
        var c = RelayServerConfiguration()
        c.host = try args.string("host").map { try BindHost.resolve($0) } ?? c.host
        c.port = try args.int("port", in: 0...65535) ?? c.port
        let database = try args.string("db")
        c.databasePath = database ?? c.databasePath
        let sync = try args.string("sync")
        if let store = try args.string("store") {
            do {
                c.redis = try RedisEndpoint(url: store)
            } catch {
                throw Arguments.UsageError(description: "--store: \(error)")
            }
            // Both are the SQLite file's: with --store they were ignored without a word (a
            // `--db 2` meant as Redis database 2 ran on database 0, beside another cluster).
            if database != nil || sync != nil {
                throw Arguments.UsageError(
                    description: "--db and --sync are for the SQLite file: they do not go with --store "
                        + "(a Redis database is the URL's /DB: redis://HOST:PORT/DB)")
            }
        }
        let nodeID = try args.string("node-id")
        let leaseTTL = try args.int("lease-ttl-ms", in: 100...600_000)
        let singleNode = args.flag("single-node")
        if c.redis == nil, singleNode || nodeID != nil || leaseTTL != nil {
            throw Arguments.UsageError(description: "--single-node, --node-id and --lease-ttl-ms need --store redis://…")
        }
        if singleNode {
            guard nodeID == nil, leaseTTL == nil else {
                throw Arguments.UsageError(description: "--node-id and --lease-ttl-ms need a cluster (not --single-node)")
            }
        } else if c.redis != nil {
            var cluster = ClusterConfiguration()
            if let nodeID {
                guard ClusterConfiguration.validNodeID(nodeID) else {
                    throw Arguments.UsageError(description: "--node-id: 1–64 of A–Z a–z 0–9 _ -")
                }
                cluster.nodeID = nodeID
            }
            cluster.leaseTTLMilliseconds = leaseTTL ?? cluster.leaseTTLMilliseconds
            c.cluster = cluster
        }
        if let sync {
            guard let s = SQLiteSynchronousName(sync) else {
                throw Arguments.UsageError(description: "--sync must be full, normal or off")
            }
            c.synchronous = s
        }
        c.tlsCertificatePath = try args.string("tls-cert")
        c.tlsPrivateKeyPath = try args.string("tls-key")
        if (c.tlsCertificatePath == nil) != (c.tlsPrivateKeyPath == nil) {
            throw Arguments.UsageError(description: "--tls-cert and --tls-key go together")
        }
        // lws's own lines say it less plainly, after a failed start with a stale errno.
        for (option, path) in [("--tls-cert", c.tlsCertificatePath), ("--tls-key", c.tlsPrivateKeyPath)] {
            guard let path else { continue }
            // Only a regular file, and only its first MiB: `/dev/zero` or a FIFO hung the start.
            let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
            if let type, type != .typeRegular {
                throw Arguments.UsageError(description: "\(option) \(path): not a regular file: pass the PEM certificate and key")
            }
            guard let file = FileHandle(forReadingAtPath: path), let contents = try? file.read(upToCount: 1 << 20) else {
                throw Arguments.UsageError(
                    description: "\(option) \(path): " + (FileManager.default.fileExists(atPath: path) ? "not readable" : "no such file"))
            }
            try? file.close()
            guard Self.isPEM(contents) else {
                throw Arguments.UsageError(
                    description: "\(option) \(path): not a PEM file (no \"-----BEGIN\" line): pass the PEM certificate and key")
            }
        }
        c.maxFrameBytes = try args.int("max-frame-bytes", in: 1024...(64 << 20)) ?? c.maxFrameBytes
        c.maxQueuedBytesPerConnection = try args.int("max-queued-bytes", in: 65536...(1 << 30)) ?? c.maxQueuedBytesPerConnection
        c.receiveBufferBytes =
            try args.int("rx-buffer-bytes", in: RelayServerConfiguration.receiveBufferRange) ?? c.receiveBufferBytes
        if let proxies = try args.string("trusted-proxy") {
            c.trustedProxies = try Self.trustedProxies(proxies)
        }
        var limits = c.relay.limits
        limits.messageBytes = try args.int("message-bytes", in: 1...c.maxFrameBytes) ?? limits.messageBytes
        limits.userInfoBytes = try args.int("user-info-bytes", in: 1...c.maxFrameBytes) ?? limits.userInfoBytes
        limits.contextBytes = try args.int("context-bytes", in: 1...c.maxFrameBytes) ?? limits.contextBytes
        limits.replyTimeoutMs = try args.int("reply-timeout-ms", in: 1...3_600_000) ?? limits.replyTimeoutMs
        limits.complicationsPerDay = try args.int("complications-per-day", in: 0...100_000) ?? limits.complicationsPerDay
        limits.complicationsRemaining = limits.complicationsPerDay
        c.relay.limits = limits
        if let ttl = try args.int("pairing-code-ttl-s", in: 1...86_400) { c.relay.pairingCodeTTLms = Int64(ttl) * 1000 }
        if let hello = try args.int("hello-timeout-s", in: 1...3600) { c.relay.helloTimeoutMs = Int64(hello) * 1000 }
        let r = c.relay
        c.relay.maxQueuedItemsPerDirection = try args.int("quota-direction-items", in: 1...Int(Int32.max)) ?? r.maxQueuedItemsPerDirection
        c.relay.maxQueuedBytesPerDirection = try args.int("quota-direction-bytes", in: 1...(1 << 40)) ?? r.maxQueuedBytesPerDirection
        c.relay.maxQueuedBytesTotal = try args.int("quota-relay-bytes", in: 1...(1 << 40)) ?? r.maxQueuedBytesTotal
        c.relay.maxPendingRepliesPerPair = try args.int("quota-pair-replies", in: 1...Int(Int32.max)) ?? r.maxPendingRepliesPerPair
        c.relay.maxPendingRepliesTotal = try args.int("quota-relay-replies", in: 1...Int(Int32.max)) ?? r.maxPendingRepliesTotal
        c.relay.maxConnections = try args.int("quota-connections", in: 1...1_000_000) ?? r.maxConnections
        c.relay.maxConnectionsPerAddress = try args.int("quota-connections-per-address", in: 1...1_000_000) ?? r.maxConnectionsPerAddress
        if let ping = try args.int("ping-after-s", in: 1...3600) {
            c.pingAfterSeconds = ping
            c.hangupAfterSeconds = ping + 10
        }
        if let hangup = try args.int("hangup-after-s", in: 2...3610) {
            guard hangup > c.pingAfterSeconds else {
                throw Arguments.UsageError(
                    description: "--hangup-after-s (\(hangup)) must exceed --ping-after-s (\(c.pingAfterSeconds))")
            }
            c.hangupAfterSeconds = hangup
        }
        let consoleToken = try args.string("console-token")
        if consoleToken?.isEmpty == true { throw Arguments.UsageError(description: "--console-token must not be empty") }
        // It goes into the printed URL's query as it is: a character a URL would have to encode
        // made a link that did not open the console.
        if let consoleToken, !consoleToken.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) }) {
            throw Arguments.UsageError(description: "--console-token may hold only A-Z a-z 0-9 - . _ ~ (it goes into a URL)")
        }
        let consoleInsecure = args.flag("console-allow-insecure")
        if args.flag("console") {
            c.console = ConsoleConfiguration(token: consoleToken, allowsInsecureInterface: consoleInsecure)
        } else if consoleToken != nil || consoleInsecure {
            throw Arguments.UsageError(description: "--console-token and --console-allow-insecure need --console")
        }
        if let console = c.console {
            do {
                try console.check(host: c.host, tls: c.tlsCertificatePath != nil)
            } catch {
                throw Arguments.UsageError(description: error.description)
            }
        }
        let log = try CLI.logger(&args, component: "relay")
        try args.rejectUnknown()  // `watchrelay-relay phone` used to start a relay on the default port

        // One relay per SQLite file: a second one on the same --db refuses to start (exit 1)
        // instead of serving from a copy of the state that the first keeps changing.
        let onFile = c.redis == nil && c.databasePath != ":memory:"
        let newDatabase = onFile && access(c.databasePath, F_OK) != 0  // not FileManager: its pages stay resident
        let ownerLock = onFile ? try DatabaseOwnerLock.take(databasePath: c.databasePath, option: "--db") : nil
        // Before the URL line: a script that sends SIGTERM as soon as it reads it is heard.
        let termination = await TerminationSignal.install()
        // A relay that never started leaves no new database behind (a port in use used to
        // leave an empty one, and its lock file, for a typo in --port; so did a URL line that
        // could not be written).
        func removeNewDatabase() {
            guard newDatabase else { return }
            for file in ["", "-wal", "-shm"].map({ c.databasePath + $0 }) + (ownerLock.map { [$0.path] } ?? []) {
                try? FileManager.default.removeItem(atPath: file)
            }
        }
        let server: RelayServer
        do {
            server = try await RelayServer.start(c, log: log)
        } catch {
            removeNewDatabase()
            throw error
        }
        do throws(StandardOutput.WriteError) {
            try StandardOutput.write(line: server.url)
        } catch {
            await server.shutdown()
            removeNewDatabase()
            StandardOutput.end(error)
        }
        if let consoleURL = server.consoleURL {
            StandardError.write("console: \(consoleURL)\n")
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await termination.wait() }
            if stdinEnds {
                let lines = CLI.standardInputLines()
                group.addTask { for await _ in lines {} }
            }
            await group.next()
            group.cancelAll()
        }
        await server.shutdown()
        withExtendedLifetime(ownerLock) {}  // held until the store is closed
        return 0
    }

    /// `--trusted-proxy`'s addresses (IPv4 or IPv6 literals, comma-separated), in the plain form
    /// the transport reports peers in.
    static func trustedProxies(_ list: String) throws(Arguments.UsageError) -> Set<String> {
        var proxies = Set<String>()
        for item in list.split(separator: ",") {
            let text = item.trimmingCharacters(in: .whitespaces)
            guard let address = RelayServerConfiguration.ipAddress(text) else {
                throw Arguments.UsageError(description: "--trusted-proxy: '\(text)' is not an IP address")
            }
            proxies.insert(address)
        }
        guard !proxies.isEmpty else { throw Arguments.UsageError(description: "--trusted-proxy needs at least one IP address") }
        return proxies
    }

    /// Whether `contents` has a PEM line (`-----BEGIN …`), as a certificate and a key must:
    /// lws said of one without only "no start line", then failed with a stale errno.
    static func isPEM(_ contents: Data) -> Bool {
        String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isNewline).contains { $0.hasPrefix("-----BEGIN") }
    }
}
