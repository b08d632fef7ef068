import Foundation
import RelayCore
import RelayProtocol
import RedisClient
import RelayServer

/// `watchrelay serve`: run the relay until SIGINT or SIGTERM.
enum ServeCommand {
    static let help = """
        USAGE: watchrelay serve [options]

        Runs the relay (WatchConnectivity stand-in) on libwebsockets. Prints the URL it listens
        on as the first line of standard output (with --port 0, the chosen port).
        SIGINT/SIGTERM close every client with 1001 and exit 0.

        OPTIONS:
          --host HOST                 interface to bind (default 127.0.0.1)
          --port PORT                 port, 0 = any free port (default 8765)
          --db PATH                   SQLite database (default watchrelay-relay.db)
          --sync full|normal|off      SQLite synchronous mode (default full: fsync per group commit)
          --store redis://HOST:PORT[/DB]  keep the durable state in Redis instead of the SQLite file
                                      (run it with appendonly yes, appendfsync always: docs/REDIS.md)
          --exit-on-stdin-eof         also stop at the end of standard input (a parent process that
                                      holds the pipe: when it dies, so does the relay)
          --tls-cert PEM --tls-key PEM   serve wss:// and https://
          --max-frame-bytes N         hard cap on one WebSocket message (default 1048576)
          --max-queued-bytes N        bytes queued to one slow client before close 1008 (default 8388608)
          --message-bytes N           message/reply payload limit (default 65536)
          --user-info-bytes N         userInfo/complication payload limit (default 65536)
          --context-bytes N           context payload limit (default 262144)
          --reply-timeout-ms N        reply timeout (default 10000)
          --complications-per-day N   complication budget per pair per 24 h (default 50)
          --pairing-code-ttl-s N      pairing code lifetime (default 120)
          --ping-after-s N            ping a silent client after N s (default 30)
          --hangup-after-s N          hang up on a client that sent nothing, not even a pong, for
                                      N s (default ping + 10; must exceed --ping-after-s)
          --log-level LEVEL           debug, info, warn, error (default info)
          -h, --help                  show this help
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "exit-on-stdin-eof"])
        if args.flag("help") {
            print(help)
            return 0
        }
        let stdinEnds = args.flag("exit-on-stdin-eof")
        var c = RelayServerConfiguration()
        c.host = args.string("host") ?? c.host
        c.port = try args.int("port", in: 0...65535) ?? c.port
        c.databasePath = args.string("db") ?? c.databasePath
        if let store = args.string("store") {
            do {
                c.redis = try RedisEndpoint(url: store)
            } catch {
                throw Arguments.UsageError(description: "--store: \(error)")
            }
        }
        if let sync = args.string("sync") {
            guard let s = SQLiteSynchronousName(sync) else {
                throw Arguments.UsageError(description: "--sync must be full, normal or off")
            }
            c.synchronous = s
        }
        c.tlsCertificatePath = args.string("tls-cert")
        c.tlsPrivateKeyPath = args.string("tls-key")
        if (c.tlsCertificatePath == nil) != (c.tlsPrivateKeyPath == nil) {
            throw Arguments.UsageError(description: "--tls-cert and --tls-key go together")
        }
        c.maxFrameBytes = try args.int("max-frame-bytes", in: 1024...(64 << 20)) ?? c.maxFrameBytes
        c.maxQueuedBytesPerConnection = try args.int("max-queued-bytes", in: 65536...(1 << 30)) ?? c.maxQueuedBytesPerConnection
        var limits = c.relay.limits
        limits.messageBytes = try args.int("message-bytes", in: 1...c.maxFrameBytes) ?? limits.messageBytes
        limits.userInfoBytes = try args.int("user-info-bytes", in: 1...c.maxFrameBytes) ?? limits.userInfoBytes
        limits.contextBytes = try args.int("context-bytes", in: 1...c.maxFrameBytes) ?? limits.contextBytes
        limits.replyTimeoutMs = try args.int("reply-timeout-ms", in: 1...3_600_000) ?? limits.replyTimeoutMs
        limits.complicationsPerDay = try args.int("complications-per-day", in: 0...100_000) ?? limits.complicationsPerDay
        limits.complicationsRemaining = limits.complicationsPerDay
        c.relay.limits = limits
        if let ttl = try args.int("pairing-code-ttl-s", in: 1...86_400) { c.relay.pairingCodeTTLms = Int64(ttl) * 1000 }
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
        let log = try CLI.logger(&args, component: "relay")
        try args.rejectUnknown()

        let server = try await RelayServer.start(c, log: log)
        CLI.printLine(server.url)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await CLI.waitForTerminationSignal() }
            if stdinEnds {
                let lines = CLI.standardInputLines()
                group.addTask { for await _ in lines {} }
            }
            await group.next()
            group.cancelAll()
        }
        await server.shutdown()
        return 0
    }
}
