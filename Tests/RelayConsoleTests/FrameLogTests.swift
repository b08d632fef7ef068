import RelayConsole
import RelayCore
import RelayProtocol
import Testing

/// The frame log's `type` column, read from the frame's text without parsing it.
@Suite struct FrameLogTests {
    /// Clients may send pretty-printed frames (PROTOCOL.md §3.1: whitespace between tokens is
    /// allowed; Python's `json.dumps` writes `": "`): the console names their type too.
    @Test func theTypeOfAFrameWithWhitespaceAroundItsColonIsRead() {
        #expect(FrameLog.type(of: Array(#"{"type":"hello","id":"h"}"#.utf8)) == "hello")
        #expect(FrameLog.type(of: Array(#"{"type": "hello", "id": "h"}"#.utf8)) == "hello")
        #expect(FrameLog.type(of: Array("{\n  \"type\" :\t\"send\",\r\n  \"id\": \"s\"\n}".utf8)) == "send")
        #expect(FrameLog.type(of: Array(#"{"id":"x"}"#.utf8)) == nil)
        #expect(FrameLog.type(of: Array(#"{"type": 1}"#.utf8)) == nil)
    }

    /// Frames are written with their keys sorted (the codec's writer), so a payload comes
    /// before the frame's own `type`: a payload member named `type` is not the frame's type.
    @Test func aTypeMemberInsideThePayloadIsNotTheFramesType() {
        #expect(FrameLog.type(of: Array(#"{"id":"s-1","mode":"message","payload":{"kind":"k","type":"reply"},"type":"send"}"#.utf8)) == "send")
        #expect(FrameLog.type(of: Array(#"{"id":"r-1","payload":{"dict":{"type":"x"},"kind":"wc.reply"},"re":"s","type":"reply"}"#.utf8)) == "reply")
        #expect(FrameLog.type(of: Array(#"{"a":["type",{"type":"no"}],"b":"\"type\":\"no\"","type":"ack"}"#.utf8)) == "ack")
        #expect(FrameLog.type(of: Array(#"{"payload":{"type":"reply"}}"#.utf8)) == nil)
        #expect(FrameLog.type(of: Array(#"[{"type":"send"}]"#.utf8)) == nil)
    }

    /// A device token is a secret (PROTOCOL.md §6.2): the console's frame log showed each
    /// `hello`'s and `paired`'s in clear, to anyone with the console token or a saved page.
    @Test func tokensAreHiddenInThePreview() throws {
        let token = "JyEey8S426-4ppKdmZqmy0rsXmOjGtqX7uXSdDV8WsQ"
        var log = FrameLog()
        let frames = [
            #"{"type":"hello","id":"w-1","protocol":1,"role":"watch","device":{"name":"W"},"token":"\#(token)"}"#,
            #"{"type":"paired","re":"p-1","pairId":"pr-1","token": "\#(token)","peer":{"name":"P"}}"#,
            #"{"type":"hello","id":"w-2","device":{"name":"\#(String(repeating: "n", count: 180))"},"token":"\#(token)"}"#,
        ]
        for frame in frames {
            log.append(Array(frame.utf8), direction: "in", link: LinkID(1), member: nil, at: Timestamp(millisecondsSinceEpoch: 0))
        }
        let previews = log.entries().map(\.preview)
        #expect(previews.count == 3)
        // The third's token begins a few bytes before the cut: not one character of it shows.
        for preview in previews {
            #expect(!preview.contains(String(token.prefix(3))), "\(preview)")
        }
        #expect(previews.filter { $0.contains(FrameLog.hiddenToken) }.count == 2, "\(previews)")
        #expect(log.entries().map(\.type) == ["hello", "paired", "hello"])
    }

    /// A frame whose long token shrinks to fewer than `previewBytes` once hidden is still shown
    /// as cut; one that fits whole once hidden is not.
    @Test func aPreviewShortenedByHidingATokenStillSaysItWasCut() {
        var log = FrameLog()
        let long = #"{"type":"hello","token":"\#(String(repeating: "A", count: 400))"}"#
        let fits = #"{"type":"hello","token":"\#(String(repeating: "A", count: 230))"}"#
        for frame in [long, fits] {
            log.append(Array(frame.utf8), direction: "in", link: LinkID(1), member: nil, at: Timestamp(millisecondsSinceEpoch: 0))
        }
        let previews = log.entries().map(\.preview)
        #expect(previews == [#"{"type":"hello","token":"<hidden>"}"#, #"{"type":"hello","token":"<hidden>…"#])
    }
}
