import Foundation
import RelayProtocol

/// WatchConnectivity dictionaries (`[String: Any]` of property-list types) as relay payloads.
///
/// A dictionary travels as the payload `{"kind": "wc.<channel>", "dict": …}` (PROTOCOL.md,
/// "WatchConnectivity payloads"). Strings, booleans, integers, doubles, arrays and
/// string-keyed dictionaries map to their JSON forms (a `Substring` as a string and a `Decimal`
/// as a number, as Apple's Foundation bridges them); `Data` becomes `{"$data": base64}`, `Date`
/// `{"$refDate": seconds since 2001-01-01}` (Foundation's reference date: the `Date` itself,
/// so the one received equals the one sent; seconds since 1970 lost the last bit of about half
/// of them; `{"$date": seconds since 1970}` is still read), and a dictionary whose only key starts with `$` is wrapped
/// as `{"$dict": …}` so it is never mistaken for one of those. Anything else (`NSNull`,
/// optionals, URLs, custom types) is `payloadUnsupportedTypes`, as in WatchConnectivity; so are
/// the numbers JSON has no form for (NaN, infinities, integers above `Int64.max`), which a
/// property list would hold (README, "What differs").
enum PropertyListPayload {
    /// The channel kinds: one per WatchConnectivity transfer.
    enum Channel: String, Sendable {
        case message = "wc.message"
        case messageData = "wc.messageData"
        case reply = "wc.reply"
        case replyData = "wc.replyData"
        case replyError = "wc.replyError"
        case context = "wc.context"
        case userInfo = "wc.userInfo"
        case fileChunk = "wc.fileChunk"
        case fileCancel = "wc.fileCancel"
    }

    /// Encodes `dictionary` for `channel`; `extra` adds envelope members (e.g. the transfer id).
    ///
    /// - Throws: ``WCError/Code/payloadUnsupportedTypes`` for a value that is not a property-list type.
    static func encode(
        _ dictionary: [String: Any], channel: Channel, extra: [String: JSONValue] = [:]
    ) throws(WCError) -> Payload {
        var members = extra
        let dict = try encodeDictionary(dictionary)
        if nests(dict, deeperThan: maxNesting) { throw tooDeep }
        members["dict"] = dict
        members["kind"] = .string(channel.rawValue)
        return Payload(members: members)
    }

    /// How many levels of dictionaries and arrays a dictionary may hold (itself the first; a
    /// `Data`, a `Date` or a dictionary whose only key starts with `$` is one more, the object
    /// that carries or wraps it). The relay's frames and the device's stores are JSON nested at
    /// most ``JSONParser/defaultMaxDepth`` (64) levels (PROTOCOL.md §3.1), and the deepest place
    /// a dictionary goes, the relay session's row of outstanding transfers, puts it 3 levels
    /// down. One deeper was sent (a message never answered, a context delivered changed, an
    /// application context or userInfo that stopped the queue) or kept (a userInfo that made the
    /// session fail to activate at the next launch); it now fails at the call with
    /// `payloadUnsupportedTypes` (README, "What differs").
    static let maxNesting = JSONParser.defaultMaxDepth - 3

    /// Whether `value` has more than `limit` levels of objects and arrays (it stops looking
    /// at the first path that does).
    private static func nests(_ value: JSONValue, deeperThan limit: Int) -> Bool {
        switch value {
        case .object(let members): return limit < 1 || members.values.contains { nests($0, deeperThan: limit - 1) }
        case .array(let items): return limit < 1 || items.contains { nests($0, deeperThan: limit - 1) }
        default: return false
        }
    }

    private static var tooDeep: WCError {
        WCError(
            .payloadUnsupportedTypes,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "Payload nests dictionaries and arrays more than \(maxNesting) levels deep, which the relay's JSON "
                    + "cannot carry (a Data, a Date or a dictionary whose only key starts with $ counts one level more)."
            ])
    }

    /// `Data` for `sendMessageData` and its reply.
    static func encode(data: Data, channel: Channel) -> Payload {
        Payload(kind: channel.rawValue, ["data": .string(data.base64EncodedString())])
    }

    /// The dictionary of a received payload. A payload that WatchConnectivity did not send (the
    /// project's own apps' kinds) is handed over as its JSON members, `kind` included.
    static func dictionary(of payload: Payload) -> [String: Any] {
        if payload.kind?.hasPrefix("wc.") == true, let dict = payload.members["dict"] {
            // A top-level dictionary whose only key starts with `$` arrives wrapped.
            return decodeValue(dict) as? [String: Any] ?? [:]
        }
        return decodeDictionary(payload.members)
    }

    /// The bytes of a `wc.messageData` / `wc.replyData` payload.
    static func data(of payload: Payload) -> Data? {
        payload.members["data"]?.stringValue.flatMap { Data(base64Encoded: $0) }
    }

    // MARK: - Encoding

    private static func encodeDictionary(_ dictionary: [String: Any]) throws(WCError) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (key, value) in dictionary { object[key] = try encodeValue(value) }
        if object.count == 1, let key = object.keys.first, key.hasPrefix("$") {
            return .object(["$dict": .object(object)])
        }
        return .object(object)
    }

    private static func encodeValue(_ value: Any) throws(WCError) -> JSONValue {
        // An `NSNumber` object (from `JSONSerialization`, a decoded property list, a received
        // payload sent on) goes by what it holds: on Linux `as Bool` would take its 0 and 1.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return try encodeNumber(number)
        }
        switch value {
        case let v as String: return .string(v)
        // What Apple's Foundation bridges to a property-list object on the way in: a Substring
        // (`split`, `dropFirst`) to NSString, a Decimal to NSDecimalNumber (an NSNumber).
        case let v as Substring: return .string(String(v))
        case let v as Decimal: return try encodeNumber(NSDecimalNumber(decimal: v))
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt where v <= UInt(Int64.max): return .int(Int64(v))
        case let v as UInt64 where v <= UInt64(Int64.max): return .int(Int64(v))
        case let v as Double where v.isFinite: return .double(v)
        case let v as Float where v.isFinite: return .double(Double(v))
        case let v as CGFloat where v.isFinite: return .double(Double(v))
        case let v as Data: return .object(["$data": .string(v.base64EncodedString())])
        case let v as Date: return .object(["$refDate": .double(v.timeIntervalSinceReferenceDate)])
        case let v as [String: Any]: return try encodeDictionary(v)
        case let v as [Any]:
            var items: [JSONValue] = []
            for item in v { items.append(try encodeValue(item)) }
            return .array(items)
        // The types are property-list types; these values are not in JSON (the cases above
        // took every finite double and every integer up to Int64.max).
        case let v as Double: throw unrepresentable(v)
        case let v as Float: throw unrepresentable(v)
        case let v as CGFloat: throw unrepresentable(v)
        case let v as UInt: throw unrepresentable(v)
        case let v as UInt64: throw unrepresentable(v)
        default:
            throw unsupported(value)
        }
    }

    /// A boolean `NSNumber` (`objCType` `c`, Foundation's `true` and `false`) as a boolean; an
    /// integer as an integer when it fits `Int64`; anything else as a finite double.
    private static func encodeNumber(_ number: NSNumber) throws(WCError) -> JSONValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "B"):
            let integer = number.int64Value
            return integer == 0 || integer == 1 ? .bool(integer == 1) : .int(integer)
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            break
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
            if number.uint64Value <= UInt64(Int64.max) { return .int(Int64(number.uint64Value)) }
            throw unrepresentable(number.uint64Value)
        default:
            return .int(number.int64Value)
        }
        guard number.doubleValue.isFinite else { throw unrepresentable(number.doubleValue) }
        return .double(number.doubleValue)
    }

    private static func unsupported(_ value: Any) -> WCError {
        WCError(
            .payloadUnsupportedTypes,
            userInfo: [NSLocalizedDescriptionKey: "Payload contains unsupported type: \(type(of: value))."])
    }

    /// A number of a property-list type that JSON cannot hold (NaN, an infinity, an integer
    /// above `Int64.max`): said as the value, since its type is one the payload supports.
    private static func unrepresentable(_ value: some CustomStringConvertible) -> WCError {
        WCError(
            .payloadUnsupportedTypes,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "Payload contains the number \(value), which the relay's JSON cannot carry "
                    + "(no NaN or infinity, no integer above \(Int64.max))."
            ])
    }

    // MARK: - Decoding

    private static func decodeDictionary(_ object: [String: JSONValue]) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for (key, value) in object { dictionary[key] = decodeValue(value) }
        return dictionary
    }

    private static func decodeValue(_ value: JSONValue) -> Any {
        switch value {
        // Numbers and booleans come out as `NSNumber`, as from Apple's property lists, so that
        // `as? Double` reads an integer, `as? Int` a boolean, `as? Float` a double (when exact).
        case .null: return NSNull()
        case .bool(let b): return NSNumber(value: b)
        case .int(let i): return NSNumber(value: i)
        case .double(let d): return NSNumber(value: d)
        case .string(let s): return s
        case .array(let items): return items.map(decodeValue)
        case .object(let object):
            if object.count == 1, let (key, inner) = object.first {
                switch (key, inner) {
                case ("$data", .string(let base64)): return Data(base64Encoded: base64) ?? Data()
                case ("$refDate", let seconds): return Date(timeIntervalSinceReferenceDate: seconds.doubleValue ?? 0)
                case ("$date", let seconds): return Date(timeIntervalSince1970: seconds.doubleValue ?? 0)
                case ("$dict", .object(let wrapped)): return decodeDictionary(wrapped)
                default: break
                }
            }
            return decodeDictionary(object)
        }
    }
}

extension JSONValue {
    /// The number as a `Double`, or `nil` if this is not a number.
    fileprivate var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}
