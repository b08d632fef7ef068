import Foundation
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// Over real sockets, the receiver gets the sender's payload bytes exactly (PROTOCOL.md §3.7):
/// big integers, `-0`, `1.0`, escapes and whitespace are not rewritten, in `deliver`, in
/// `reply`, and after a restart from the store (queued items and `welcome.context`).
@Suite(.timeLimit(.minutes(5)))
struct PayloadPassThroughTests {
    static let payloads: [String] = [
        #"{"kind":"big","n":18446744073709551616}"#,
        #"{"kind":"big","n":-9223372036854775809}"#,
        #"{"kind":"zero","n":-0,"f":-0.0}"#,
        #"{"kind":"one","a":1.0,"b":1,"c":1E0}"#,
        #"{"kind":"esc","a":"\u00e9","b":"é","c":"\/","d":"\ud83d\udc99"}"#,
        "{ \"kind\" : \"ws\" ,\n\t\"a\" : [ 1 , { } ] \r\n}",
        #"{"z":1,"kind":"order"}"#,
    ]

    /// `"payload":RAW,"sentAt"`: how the payload must appear inside a `deliver`.
    static func spliced(_ raw: String) -> [UInt8] { Array((#""payload":"# + raw + #","sentAt""#).utf8) }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func messagesAndRepliesArriveAsTheSenderWroteThem() async throws {
        let relay = try await TestRelay.start()
        let (phone, watch, _, _) = try await pairDevices(relay)
        for (i, raw) in Self.payloads.enumerated() {
            // Every other frame is pretty-printed with an unknown member (the general decoder).
            let extra = i % 2 == 0 ? "" : #" , "future" : { "x" : 1 } "#
            watch.sendRaw(#"{"type":"send","id":"m-\#(i)","mode":"message","wantsReply":true,"payload":"# + raw + extra + "}")
            guard case .accepted(let a) = try await watch.next() else { throw TestFailure("accepted") }
            #expect(a.re == "m-\(i)")
            let deliver = try await phone.nextBytes()
            #expect(Self.contains(deliver, Self.spliced(raw)), "\(String(decoding: deliver, as: UTF8.self))")

            phone.sendRaw(#"{"type":"reply","id":"r-\#(i)","re":"m-\#(i)","payload":"# + raw + extra + "}")
            let reply = try await watch.nextBytes()
            #expect(reply == Array((#"{"payload":"# + raw + #","re":"m-\#(i)","type":"reply"}"#).utf8))
        }
        await relay.stop()
    }

    @Test func storedItemsAndTheContextComeBackByteForByteAfterARestart() async throws {
        let dir = TemporaryDirectory()
        let db = dir.path + "/relay.db"
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        var relay = try await RelayProcess.start(db: db)
        defer { relay.terminate() }

        let (phone, watch, _, watchToken) = try await pairDevices(url: relay.url, clients: clients)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer gone
        var sent: [String: String] = [:]
        for (i, raw) in Self.payloads.enumerated() {
            sent["u-\(i)"] = raw
            phone.sendRaw(#"{"type":"send","id":"u-\#(i)","mode":"userInfo","payload":"# + raw + "}")
            guard case .accepted = try await phone.next() else { throw TestFailure("accepted u-\(i)") }
        }
        let contextRaw = Self.payloads[5]
        sent["c-1"] = contextRaw
        phone.sendRaw(#"{"type":"send","id":"c-1","mode":"context","payload":"# + contextRaw + "}")
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted c-1") }

        // Everything accepted is in the store: restart and let the watch take it all.
        await relay.kill9()
        relay = try await RelayProcess.start(db: db)
        let watch2 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        try await watch2.hello(token: watchToken)
        var lastSeq: Int64 = 0
        var seen: Set<String> = []
        while seen.count < sent.count {
            let bytes = try await watch2.nextBytes()
            guard case .deliver(let d) = try FrameCodec.decodeRelayFrame(bytes), let raw = sent[d.id] else {
                throw TestFailure("expected a deliver of a sent item: \(String(decoding: bytes, as: UTF8.self))")
            }
            #expect(Self.contains(bytes, Self.spliced(raw)), "\(String(decoding: bytes, as: UTF8.self))")
            seen.insert(d.id)
            lastSeq = max(lastSeq, d.seq)
            watch2.send(.ack(Ack(seq: d.seq)))
        }
        watch2.connection.close()
        _ = try await watch2.closed()

        // The acked context is the direction's last one: after another restart it comes in `welcome`.
        await relay.stop()
        relay = try await RelayProcess.start(db: db)
        let watch3 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        watch3.send(.hello(Hello(id: "h-3", role: .watch, deviceName: "W", token: watchToken, lastSeq: lastSeq)))
        let welcome = try await watch3.nextBytes()
        guard case .welcome(let w) = try FrameCodec.decodeRelayFrame(welcome) else { throw TestFailure("welcome") }
        #expect(w.context?.id == "c-1")
        #expect(Self.contains(welcome, Self.spliced(contextRaw)), "\(String(decoding: welcome, as: UTF8.self))")
        await relay.stop()
        await clients.shutdown()
    }

    /// `serve --rx-buffer-bytes`: at the smallest buffer a 60 KiB payload reaches the relay in
    /// ~120 chunks of 512 bytes, at the largest in two, and the watch gets the same bytes.
    @Test(arguments: ["512", "32768"])
    func aLargePayloadPassesWhateverTheReceiveBuffer(_ rxBufferBytes: String) async throws {
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let relay = try await RelayProcess.start(db: dir.path + "/relay.db", extra: ["--rx-buffer-bytes", rxBufferBytes])
        defer { relay.terminate() }
        let (phone, watch, _, _) = try await pairDevices(url: relay.url, clients: clients)
        let raw = #"{"kind":"large","text":""# + String(repeating: "0123456789abcdef", count: 60 * 64) + #""}"#
        phone.sendRaw(#"{"type":"send","id":"m-large","mode":"message","payload":"# + raw + "}")
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        let deliver = try await watch.nextBytes()
        #expect(Self.contains(deliver, Self.spliced(raw)))
        await relay.stop()
        await clients.shutdown()
    }
}
