import WebSocketTransport

/// The messages the generator sends, and what it reads back from delivered ones.
///
/// Every relay gets the same bytes: a WatchRelay `send` frame whose payload carries a send
/// timestamp (`at`, nanoseconds of the generator's monotonic clock, offset so it always has 16
/// digits) and a sequence number in the `id`. The WatchRelay relay delivers it as a `deliver`
/// frame (keys sorted, so `id` and `payload.at` come early); the raw peers forward it as is;
/// mosquitto carries it as the PUBLISH payload.
struct BenchFrameFactory: Sendable {
    /// The mode of the `send` frames: `message` or `userInfo`.
    let mode: String
    /// Size of the payload's compact JSON, which is what the relay's per-mode limit counts.
    let payloadBytes: Int
    /// The frame with zeroed digits; `make` patches the sequence and timestamp in.
    private let template: [UInt8]
    private let sequenceOffset: Int
    private let timestampOffset: Int

    /// Digits of the sequence number in the `id` (`m0000000001`).
    static let sequenceDigits = 10
    /// Digits of the `at` timestamp: 10^15 plus nanoseconds since the run began.
    static let timestampDigits = 16
    /// The smallest payload: `{"at":…,"kind":"bench","pad":""}`.
    static let minimumPayloadBytes = #"{"at":,"kind":"bench","pad":""}"#.utf8.count + timestampDigits

    /// Builds the template for `payloadBytes` (at least ``minimumPayloadBytes``).
    init(mode: String, payloadBytes: Int) {
        self.mode = mode
        self.payloadBytes = max(payloadBytes, Self.minimumPayloadBytes)
        let pad = String(repeating: "x", count: self.payloadBytes - Self.minimumPayloadBytes)
        let zeros = String(repeating: "0", count: Self.timestampDigits)
        let sequence = String(repeating: "0", count: Self.sequenceDigits)
        let head = #"{"type":"send","id":"m"#
        let middle = #"","mode":"\#(mode)","payload":{"at":"#
        let text = head + sequence + middle + zeros + #","kind":"bench","pad":"\#(pad)"}}"#
        template = Array(text.utf8)
        sequenceOffset = head.utf8.count
        timestampOffset = head.utf8.count + Self.sequenceDigits + middle.utf8.count
    }

    /// A frame with this sequence number and timestamp (`BenchClock.stamp()`).
    func make(sequence: Int, at stamp: UInt64) -> [UInt8] {
        var frame = template
        Self.writeDigits(UInt64(sequence), into: &frame, at: sequenceOffset, count: Self.sequenceDigits)
        Self.writeDigits(stamp, into: &frame, at: timestampOffset, count: Self.timestampDigits)
        return frame
    }

    /// The frame used to check that a pair is linked: it has no sequence, so consumers skip it.
    var probe: [UInt8] {
        Array(#"{"type":"send","id":"probe","mode":"\#(mode)","payload":{"kind":"probe"}}"#.utf8)
    }

    private static func writeDigits(_ value: UInt64, into bytes: inout [UInt8], at offset: Int, count: Int) {
        var rest = value
        for index in stride(from: offset + count - 1, through: offset, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }
}

/// What the generator reads from a delivered message.
struct BenchDelivery: Sendable {
    /// The sequence number from the `id`.
    let sequence: Int
    /// The send timestamp from `payload.at`.
    let sentAt: UInt64

    /// Reads `"id":"m<digits>"` and `"at":<digits>` from the first bytes of a message; nil for
    /// anything else (probes, other frames).
    static func parse(_ bytes: [UInt8]) -> BenchDelivery? {
        let buffer = bytes.span
        let window = min(buffer.count, 320)
        guard let sequence = number(after: idMarker, in: buffer, from: 0, limit: window),
            let at = number(after: atMarker, in: buffer, from: 0, limit: window)
        else { return nil }
        return BenchDelivery(sequence: Int(sequence), sentAt: at)
    }

    /// The `seq` of a WatchRelay `deliver` frame (sorted keys put it near the end).
    static func relaySeq(_ bytes: [UInt8]) -> Int64? {
        let buffer = bytes.span
        let start = max(0, buffer.count - 160)
        return number(after: seqMarker, in: buffer, from: start, limit: buffer.count - start).map { Int64($0) }
    }

    /// Whether a WatchRelay frame has this `type`.
    ///
    /// The relay writes keys in sorted order, so `type` is the last key of a frame but for
    /// `wantsReply` (a `deliver`) and `wcCode` (an `error`), which sort after it: the frame's
    /// `type` is the last `"type":"` in its final ``typeWindow`` bytes (a payload's own `type`
    /// comes before the keys that follow the payload).
    static func isRelayFrame(_ bytes: [UInt8], type: BenchFrameType) -> Bool {
        let name = type.bytes
        var start = bytes.count - typeKey.count
        let lowest = max(0, bytes.count - typeWindow)
        while start >= lowest {
            if bytes[start] == typeKey[0], bytes[start..<start + typeKey.count].elementsEqual(typeKey) {
                let nameStart = start + typeKey.count
                let nameEnd = nameStart + name.count
                guard nameEnd + 1 < bytes.count, bytes[nameStart..<nameEnd].elementsEqual(name),
                    bytes[nameEnd] == UInt8(ascii: "\"")
                else { return false }
                return bytes[nameEnd + 1] == UInt8(ascii: "}") || bytes[nameEnd + 1] == UInt8(ascii: ",")
            }
            start -= 1
        }
        return false
    }

    /// How far from a frame's end its `type` key can start: `"type":"pair.code"` and what may
    /// follow it (`,"wantsReply":false}` or `,"wcCode":` and four digits).
    private static let typeWindow = 64

    private static let typeKey = Array(#""type":""#.utf8)

    private static let idMarker = Array(#""id":"m"#.utf8)
    private static let atMarker = Array(#""at":"#.utf8)
    private static let seqMarker = Array(#""seq":"#.utf8)

    /// The decimal number right after the first occurrence of `marker` in the `limit` bytes of
    /// `buffer` from `start`.
    private static func number(after marker: [UInt8], in buffer: Span<UInt8>, from start: Int, limit: Int) -> UInt64? {
        guard limit >= marker.count else { return nil }
        var index = start
        while index <= start + limit - marker.count {
            if buffer[index] == marker[0] && matches(marker, in: buffer, at: index) {
                var cursor = index + marker.count
                var value: UInt64 = 0
                var digits = 0
                while cursor < buffer.count, buffer[cursor] >= 48, buffer[cursor] <= 57, digits < 19 {
                    value = value * 10 + UInt64(buffer[cursor] - 48)
                    cursor += 1
                    digits += 1
                }
                return digits == 0 ? nil : value
            }
            index += 1
        }
        return nil
    }

    private static func matches(_ marker: [UInt8], in buffer: Span<UInt8>, at index: Int) -> Bool {
        for offset in marker.indices where buffer[index + offset] != marker[offset] { return false }
        return true
    }
}

/// A WatchRelay frame `type` the generator looks for, as bytes made once (the check runs for
/// every frame the generator receives).
struct BenchFrameType: Sendable, CustomStringConvertible {
    let description: String
    let bytes: [UInt8]

    private init(_ name: String) {
        description = name
        bytes = Array(name.utf8)
    }

    static let deliver = BenchFrameType("deliver")
    static let accepted = BenchFrameType("accepted")
    static let error = BenchFrameType("error")
    static let welcome = BenchFrameType("welcome")
    static let pairCode = BenchFrameType("pair.code")
    static let paired = BenchFrameType("paired")
}

/// The generator's clock: monotonic nanoseconds (the transport's ``MonotonicClock``, so the
/// service thread's stamps compare with these), as the 16-digit `at` stamps.
enum BenchClock {
    /// Where stamps count from (the first use in the process).
    private static let origin = MonotonicClock.nanoseconds()
    /// 10^15: keeps every stamp at 16 digits for the first ~100 days of a run.
    static let base: UInt64 = 1_000_000_000_000_000

    /// Now, as a stamp.
    static func stamp() -> UInt64 {
        let start = origin  // initialised on first use: read it before taking `now`
        return stamp(monotonic: MonotonicClock.nanoseconds(), origin: start)
    }

    /// A ``MonotonicClock`` reading as a stamp.
    static func stamp(monotonic nanoseconds: UInt64) -> UInt64 {
        stamp(monotonic: nanoseconds, origin: origin)
    }

    /// The ``MonotonicClock`` reading of a stamp (0 stays 0), e.g. to line up with
    /// `perf record -k CLOCK_MONOTONIC`.
    static func monotonic(stamp: UInt64) -> UInt64 {
        stamp == 0 ? 0 : stamp - base + origin
    }

    private static func stamp(monotonic nanoseconds: UInt64, origin: UInt64) -> UInt64 {
        base + (nanoseconds > origin ? nanoseconds - origin : 0)
    }
}
