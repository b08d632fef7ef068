import Testing
import WebSocketTransport

@testable import RelayServer

/// The nodes' pub/sub messages: every kind round-trips, frames travel as their bytes, and
/// anything else is refused.
struct ClusterMessageTests {
    @Test func everyKindRoundTripsWithItsBytesUntouched() {
        let frame: [UInt8] = Array(#"{"type":"hello","note":"a\nb c"}"#.utf8) + [0xE2, 0x9C, 0x93]
        let messages: [ClusterMessage] = [
            .opened(connection: "edge-1:7", address: "127.0.0.1"), .clientText(connection: "edge-1:7", frame),
            .clientText(connection: "e:1", []), .clientBinary(connection: "e:1"), .clientTooLarge(connection: "e:1", size: 2_000_000),
            .clientGone(connection: "e:1"), .send(connection: "e:1", frame),
            .close(connection: "e:1", code: 4001, reason: "replaced by a newer connection"),
            .close(connection: "e:1", code: 1012, reason: ""),
        ]
        for message in messages {
            #expect(ClusterMessage(decoding: message.encoded) == message)
        }
        #expect(messages.filter(\.isForLeader).count == 6)
    }

    @Test func unknownOrMalformedMessagesAreRefused() {
        for text in ["", "text e:1", "nope e:1\n", "large e:1 many\n", "close e:1\n", "close e:1 99999\n", "open\n"] {
            #expect(ClusterMessage(decoding: Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aConnectionNamesItsEdge() {
        #expect(ClusterMessage.edge(of: "node-a:42") == "node-a")
        #expect(ClusterMessage.edge(of: "no-colon") == nil)
        #expect(ClusterMessage.channel(of: "node-a", database: 0) == "wr:node:node-a")
        #expect(ClusterMessage.channel(of: "node-a", database: 3) == "wr:3:node:node-a")
    }

    @Test func forwardedConnectionsGetIDsLwsNeverUses() {
        var links = RemoteLinks()
        let a = links.open("e:1")
        #expect(a.map(RemoteLinks.isRemote) == true)
        #expect(links.open("e:1") == nil, "a name is opened once")
        let b = links.open("e:2")
        #expect(a != nil && b != nil && a != b)
        #expect(links.id(of: "e:2") == b)
        #expect(links.remove(b!) == "e:2")
        #expect(links.remove(b!) == nil)
        #expect(links.name(of: a!) == "e:1")
        #expect(!RemoteLinks.isRemote(.init(rawValue: 1)))
    }
}
