import CLIArguments
import Foundation
import Primitives
import RelayCore
import RelayProtocol
import RelayServer

/// `watchrelay bench-core`: the relay's step alone, with no socket and no thread. A paired
/// `RelayState` handles `--messages` phone → watch `message` sends (64 B payloads, each
/// frame's bytes as a client sent them), and every frame it answers is encoded as the engine
/// encodes it. Prints the median nanoseconds per message over `--reps` repetitions.
///
/// What the socket benchmarks cannot show: a change of a few per cent in the core's cost.
/// Their run-to-run spread on a shared machine is ±5–20 %; this loop's is about 1 %.
public enum BenchCoreCommand {
    static let help = """
        USAGE: watchrelay bench-core [--messages N] [--reps R] [--payload B]

        The relay core's step per message, in this process: decode the client's `send`
        frame, handle it (seq, `accepted`, `deliver`), encode both answers. No socket, no
        thread, no store. Prints ns per message (median, min, max over R repetitions) and the
        answer bytes per message.

        OPTIONS:
          --messages N   messages per repetition, 1...10000000 (default 100000)
          --reps R       repetitions, 1...100 (default 7)
          --payload B    payload bytes per message, 16...65536 (default 64)
          -h, --help     show this help
        """

    public static func run(_ argv: [String]) throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let messages = try args.int("messages", in: 1...10_000_000) ?? 100_000
        let reps = try args.int("reps", in: 1...100) ?? 7
        let payloadBytes = try args.int("payload", in: 16...65_536) ?? 64
        try args.rejectUnknown()

        var state = RelayState(environment: .live)
        var clock = Timestamp(millisecondsSinceEpoch: 1_796_000_000_000)
        let phone = try pair(&state, &clock)
        let filler = String(repeating: "x", count: max(0, payloadBytes - 30))
        let expected = FrameCodec.encode(
            ClientFrame.send(Send(id: "m-0", mode: .message, payload: Payload(kind: "bench.fill", ["s": .string(filler)]))))
        guard sendFrame(id: "m-0", filler: filler) == expected else {
            throw BenchError.setup("bench-core: its send frame is not the codec's encoding")
        }
        var times: [Double] = []
        var answerBytes = 0
        var serial = 0
        for _ in 0..<reps {
            // The frames as bytes before the clock starts: only the relay's side is timed. They
            // are the codec's encoding of the `send` (checked above), written directly so
            // a profile of this command shows the relay's step, not the setup.
            let frames = (0..<messages).map { _ in
                serial += 1
                return sendFrame(id: "m-\(serial)", filler: filler)
            }
            answerBytes = 0
            let start = ContinuousClock.now
            for bytes in frames {
                let actions = state.handle(.frame(phone, bytes), now: clock)
                state.seqReservationsCommitted(in: actions)  // no store: committed at once
                for action in actions {
                    if case .send(_, let frame) = action { answerBytes += FrameCodec.encode(frame).count }
                }
            }
            let elapsed = ContinuousClock.now - start
            // Messages are not acked: nothing piles up between repetitions.
            times.append(Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9)
        }
        // `reps` ≥ 1: one time at least.
        let perMessage = times.map { $0 / Double(messages) }.sorted()
        StandardOutput.writeLine(
            String(
                format: "bench-core: %d × %d messages of %d B: %.0f ns per message (median; min %.0f, max %.0f), %d answer bytes per message",
                reps, messages, payloadBytes, perMessage[perMessage.count / 2], perMessage[0], perMessage[perMessage.count - 1],
                answerBytes / messages))
        return 0
    }

    /// The bytes of a phone's `send` of a `message` whose payload is `{"kind":"bench.fill","s":filler}`:
    /// what ``FrameCodec/encode(_:)-(ClientFrame)`` writes for it (keys sorted, compact).
    static func sendFrame(id: String, filler: String) -> [UInt8] {
        Array(#"{"id":"\#(id)","mode":"message","payload":{"kind":"bench.fill","s":"\#(filler)"},"type":"send"}"#.utf8)
    }

    /// A phone and a watch (foreground) connected and paired; returns the phone's link.
    private static func pair(_ state: inout RelayState, _ now: inout Timestamp) throws -> LinkID {
        let phone = LinkID(1)
        let watch = LinkID(2)
        func step(_ event: RelayEvent) -> [RelayAction] {
            now = now.adding(milliseconds: 1)
            return state.handle(event, now: now)
        }
        _ = step(.opened(phone, address: "127.0.0.1"))
        _ = step(.frame(phone, FrameCodec.encode(ClientFrame.hello(Hello(id: "h-p", role: .phone, deviceName: "Bench phone")))))
        var code: String?
        for case .send(_, .pairCode(let c)) in step(.frame(phone, FrameCodec.encode(ClientFrame.pairBegin(Request(id: "pb"))))) {
            code = c.code
        }
        guard let code else { throw BenchError.setup("bench-core: no pair.code") }
        _ = step(.opened(watch, address: "127.0.0.1"))
        _ = step(
            .frame(
                watch,
                FrameCodec.encode(ClientFrame.hello(Hello(id: "h-w", role: .watch, deviceName: "Bench watch", foreground: true)))))
        let joined = step(.frame(watch, FrameCodec.encode(ClientFrame.pairJoin(PairJoin(id: "pj", code: code)))))
        guard joined.contains(where: { if case .send(_, .paired) = $0 { true } else { false } }) else {
            throw BenchError.setup("bench-core: pairing failed: \(joined)")
        }
        return phone
    }
}
