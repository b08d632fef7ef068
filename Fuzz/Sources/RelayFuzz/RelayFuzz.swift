import GitExplorerPayloads
import RelayCore
@_spi(Testing) import RelayProtocol
import Synchronization

/// libFuzzer entry point.
///
/// The first byte picks the target: even → the frame decoders alone; odd → RelayCore, fed a
/// sequence of events on a relay that already has a paired phone and watch (so the fuzzer
/// reaches deliveries, acks, replies and cancels, not only `hello_required`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    if selector & 1 == 0 {
        fuzzDecoders(Array(bytes.dropFirst()))
    } else {
        fuzzCore(Array(bytes.dropFirst()))
    }
    return 0
}

private func fuzzDecoders(_ bytes: [UInt8]) {
    // The fast path (send, ack) and the general decoder must agree on every input.
    let fast = Result { () throws(ProtocolError) in try FrameCodec.decodeClientFrame(bytes) }
    let general = Result { () throws(ProtocolError) in try FrameCodec.decodeClientGeneric(bytes) }
    switch (fast, general) {
    case (.success(let a), .success(let b)) where a == b: break
    case (.failure(let a), .failure(let b)) where a.code == b.code && a.field == b.field && a.re == b.re: break
    default: fatalError("fast and general decoders disagree: \(fast) vs \(general)")
    }
    if let frame = try? FrameCodec.decodeClientFrame(bytes) {
        // What decodes must re-encode and decode to the same value.
        let again = try? FrameCodec.decodeClientFrame(FrameCodec.encode(frame))
        if again != frame { fatalError("client frame did not round-trip: \(frame)") }
        _ = try? Limits.default.check(frame)
    }
    if let frame = try? FrameCodec.decodeRelayFrame(bytes) {
        let again = try? FrameCodec.decodeRelayFrame(FrameCodec.encode(frame))
        if again != frame { fatalError("relay frame did not round-trip: \(frame)") }
    }
    if let value = try? JSONParser.parse(bytes), let payload = try? Payload(json: value) {
        _ = try? AppPayload(payload)
    }
}

/// Events are separated by 0xFF; each chunk's first byte picks the link (0–3) and the event kind.
private func fuzzCore(_ bytes: [UInt8]) {
    var counter = 0
    // Deterministic ids and tokens: the same input must take the same path.
    let serial = Mutex(0)
    let next: @Sendable () -> Int = { serial.withLock { n in n += 1; return n } }
    let env = RelayEnvironment(
        pairingCode: { "123456" }, token: { String(repeating: "t", count: 43) + "\(next())" },
        identifier: { prefix in "\(prefix)-\(next())" }, hashToken: { $0 })
    var relay = RelayState(configuration: RelayConfiguration(inFlightItems: 4), environment: env)
    var now = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)
    func run(_ event: RelayEvent) {
        now = now.adding(milliseconds: 7)
        _ = relay.handle(event, now: now)
        counter += 1
    }
    // A paired phone (link 1) and watch (link 2), and a fresh link 3.
    for (link, address) in [(1, "10.0.0.1"), (2, "10.0.0.2"), (3, "10.0.0.3")] {
        run(.opened(LinkID(UInt64(link)), address: address))
    }
    run(.frame(LinkID(1), Array(#"{"type":"hello","id":"h1","protocol":1,"role":"phone","device":{"name":"P"}}"#.utf8)))
    run(.frame(LinkID(2), Array(#"{"type":"hello","id":"h2","protocol":1,"role":"watch","device":{"name":"W"}}"#.utf8)))
    run(.frame(LinkID(1), Array(#"{"type":"pair.begin","id":"b"}"#.utf8)))
    run(.frame(LinkID(2), Array(#"{"type":"pair.join","id":"j","code":"123456"}"#.utf8)))

    for chunk in bytes.split(separator: 0xFF, omittingEmptySubsequences: false).prefix(64) {
        guard let head = chunk.first else {
            run(.tick)
            continue
        }
        let link = LinkID(UInt64(head & 3) + 1)
        let body = Array(chunk.dropFirst())
        switch head >> 2 & 7 {
        case 0: run(.binary(link))
        case 1: run(.tooLarge(link, size: body.count))
        case 2: run(.closed(link))
        case 3: run(.opened(link, address: "10.0.0.\(head)"))
        case 4:
            now = now.adding(milliseconds: Int64(head) * 1000)
            run(.tick)
        default: run(.frame(link, body))
        }
    }
    _ = counter
}

/// libFuzzer's driver (exported by libclang_rt.fuzzer).
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; hand control to libFuzzer.
@_cdecl("RelayFuzz_main")
public func relayFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runDriver(&argc, &argv) { data, size in fuzz(data, size) }
}
