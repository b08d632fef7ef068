import RelayConsole
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
}
