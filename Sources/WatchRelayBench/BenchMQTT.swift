/// The few MQTT 3.1.1 packets the generator needs to drive mosquitto over WebSockets.
///
/// Each packet goes out as one binary WebSocket message on a connection that offered the
/// subprotocol `mqtt` (MQTT 3.1.1 §6). The phone is a publisher, the watch a subscriber, QoS 0
/// throughout, so the only packets that come back are CONNACK, SUBACK and PUBLISH.
///
/// - Note: the lws client transport reports a binary message as `.binary` without its bytes,
///   so the generator cannot read CONNACK's return code or a PUBLISH payload. It counts
///   binary messages instead: the first after CONNECT is CONNACK, the first after SUBSCRIBE is
///   SUBACK, and every later one on a subscriber is a PUBLISH, in publish order (mosquitto
///   writes one packet per WebSocket message, and QoS 0 on one TCP connection keeps order).
enum BenchMQTT {
    /// The WebSocket subprotocol of MQTT.
    static let subprotocol = "mqtt"

    /// CONNECT with a clean session, no will, no credentials, keep-alive off.
    static func connect(clientID: String) -> [UInt8] {
        var variable: [UInt8] = []
        appendString("MQTT", to: &variable)
        variable.append(4)  // protocol level 4 = 3.1.1
        variable.append(0x02)  // connect flags: clean session
        variable += [0, 0]  // keep-alive 0: no PINGREQ needed
        appendString(clientID, to: &variable)
        return packet(type: 0x10, body: variable)
    }

    /// SUBSCRIBE to one topic filter at QoS 0.
    static func subscribe(topic: String, packetID: UInt16) -> [UInt8] {
        var body: [UInt8] = [UInt8(packetID >> 8), UInt8(packetID & 0xFF)]
        appendString(topic, to: &body)
        body.append(0)  // requested QoS 0
        return packet(type: 0x82, body: body)  // SUBSCRIBE has fixed-header flags 0b0010
    }

    /// The head of a QoS 0 PUBLISH of `payloadCount` bytes to `topic`: append the payload.
    static func publishHeader(topic: String, payloadCount: Int) -> [UInt8] {
        let topicBytes = Array(topic.utf8)
        var head: [UInt8] = [0x30]
        head += remainingLength(2 + topicBytes.count + payloadCount)
        head += [UInt8(topicBytes.count >> 8), UInt8(topicBytes.count & 0xFF)]
        head += topicBytes
        return head
    }

    /// A whole QoS 0 PUBLISH.
    static func publish(topic: String, payload: [UInt8]) -> [UInt8] {
        var packet = publishHeader(topic: topic, payloadCount: payload.count)
        packet += payload
        return packet
    }

    /// The topic pair `index` publishes and subscribes on.
    static func topic(pair index: Int) -> String {
        "bench/\(index)"
    }

    /// A fixed header (type and flags, remaining length) followed by `body`.
    private static func packet(type: UInt8, body: [UInt8]) -> [UInt8] {
        [type] + remainingLength(body.count) + body
    }

    /// MQTT's variable-length integer: 7 bits per byte, low first, high bit = more follows.
    static func remainingLength(_ value: Int) -> [UInt8] {
        precondition(value >= 0 && value <= 268_435_455, "MQTT remaining length out of range")
        var rest = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(rest % 128)
            rest /= 128
            if rest > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while rest > 0
        return bytes
    }

    /// A UTF-8 string with its 2-byte big-endian length.
    private static func appendString(_ string: String, to bytes: inout [UInt8]) {
        let utf8 = Array(string.utf8)
        bytes += [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)]
        bytes += utf8
    }
}
