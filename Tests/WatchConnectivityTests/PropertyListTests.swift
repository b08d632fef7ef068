import Foundation
import RelayProtocol
import TestSupport
import Testing

@testable import WatchConnectivity

/// Dictionaries as relay payloads: property-list types only, round trips keep the types.
struct PropertyListTests {
    @Test func propertyListTypesRoundTrip() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let dict: [String: Any] = [
            "s": "octocat", "i": 42, "d": 2.5, "whole": 3.0, "b": true, "data": Data([0, 1, 255]), "date": date,
            "list": [1, "two", false], "nested": ["$data": "not data", "x": 1], "dollar": ["$date": 5],
        ]
        let payload = try PropertyListPayload.encode(dict, channel: .userInfo)
        #expect(payload.kind == "wc.userInfo")
        let back = PropertyListPayload.dictionary(of: payload)
        #expect(back["s"] as? String == "octocat")
        #expect(back["i"] as? Int == 42)
        #expect(back["d"] as? Double == 2.5)
        #expect(back["whole"] as? Double == 3.0)
        #expect(back["b"] as? Bool == true)
        #expect(back["data"] as? Data == Data([0, 1, 255]))
        #expect(back["date"] as? Date == date)
        let list = try #require(back["list"] as? [Any])
        #expect(list.count == 3 && list[1] as? String == "two" && list[2] as? Bool == false)
        let nested = try #require(back["nested"] as? [String: Any])
        #expect(nested["$data"] as? String == "not data")
        let dollar = try #require(back["dollar"] as? [String: Any])
        #expect(dollar["$date"] as? Int == 5)
    }

    /// A `Date` arrives `==` to the one sent, through the payload's text as on the wire: as
    /// seconds since 1970 in a double it lost its last bit for about half of today's dates.
    /// The older form is still read.
    @Test func aDateArrivesEqualToTheOneSent() throws {
        let base = Date(timeIntervalSince1970: 1_796_000_000.123_456).timeIntervalSinceReferenceDate
        let dates = (0..<64).map { Date(timeIntervalSinceReferenceDate: base + Double($0) * base.ulp) }
        let payload = try PropertyListPayload.encode(["dates": dates], channel: .userInfo)
        guard case .object(let members) = try JSONParser.parse(Array(payload.bytes)) else {
            Issue.record("the payload's text is not an object")
            return
        }
        let back = PropertyListPayload.dictionary(of: Payload(members: members))
        let received = try #require(back["dates"] as? [Date])
        #expect(received == dates)
        let legacy = Payload(kind: "wc.userInfo", ["dict": .object(["at": .object(["$date": .double(1_700_000_000.5)])])])
        #expect(PropertyListPayload.dictionary(of: legacy)["at"] as? Date == Date(timeIntervalSince1970: 1_700_000_000.5))
    }

    /// Apple delivers property-list numbers as `NSNumber`, and apps read them with whichever
    /// numeric type they think of: `as? Double` of an integer works there, so it works here.
    @Test func receivedNumbersCastAsApplesNSNumbersDo() throws {
        let sent: [String: Any] = [
            "int": 10, "double": 2.0, "half": 2.5, "bool": true, "float": Float(1.5), "cg": CGFloat(0.25),
        ]
        let back = PropertyListPayload.dictionary(of: try PropertyListPayload.encode(sent, channel: .message))
        #expect(back["int"] as? Double == 10 && back["int"] as? Int == 10)
        #expect(back["double"] as? Int == 2 && back["double"] as? Double == 2)
        #expect(back["half"] as? Int == nil && back["half"] as? Double == 2.5)
        #expect(back["bool"] as? Bool == true && back["bool"] as? Int == 1)
        #expect(back["float"] as? Float == 1.5)
        #expect(back["cg"] as? Double == 0.25)
    }

    /// Values Apple's Foundation bridges to property-list objects when the dictionary crosses
    /// into WatchConnectivity: a `Substring` (what `split` and `dropFirst` give) to `NSString`,
    /// a `Decimal` to `NSDecimalNumber`, an `NSNumber`. An app that sends `words[0]` or a price
    /// works on iOS; here they were `payloadUnsupportedTypes`.
    @Test func substringsAndDecimalsGoAsIOSBridgesThem() throws {
        let command = "delete octocat now".split(separator: " ")
        let sent: [String: Any] = [
            "login": command[1], "names": ["octocat".dropFirst(4)], "price": Decimal(string: "12.5")!, "count": Decimal(3),
        ]
        let back = PropertyListPayload.dictionary(of: try PropertyListPayload.encode(sent, channel: .message))
        #expect(back["login"] as? String == "octocat")
        #expect(back["names"] as? [String] == ["cat"])
        #expect(back["price"] as? Double == 12.5)
        #expect(back["count"] as? Int == 3)
        #expect(throws: WCError(.payloadUnsupportedTypes)) {
            _ = try PropertyListPayload.encode(["nan": Decimal.nan], channel: .message)
        }
    }

    /// `NSNumber`s from `JSONSerialization` (or a payload received and sent on) keep what they
    /// hold: on Linux `1 as? Bool` is `true`, which turned a JSON 1 into a boolean.
    @Test func nsNumbersGoAsWhatTheyHold() throws {
        let json = #"{"one":1,"zero":0,"yes":true,"no":false,"ratio":0.5,"big":9007199254740993}"#
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let payload = try PropertyListPayload.encode(object, channel: .userInfo)
        let dict = try #require(payload.members["dict"])
        #expect(dict["one"] == .int(1) && dict["zero"] == .int(0))
        #expect(dict["yes"] == .bool(true) && dict["no"] == .bool(false))
        #expect(dict["ratio"] == .double(0.5) && dict["big"] == .int(9_007_199_254_740_993))
        // Sent on as received: the same members again.
        let forwarded = try PropertyListPayload.encode(PropertyListPayload.dictionary(of: payload), channel: .userInfo)
        #expect(forwarded.members["dict"] == dict)
        #expect(throws: WCError(.payloadUnsupportedTypes)) {
            _ = try PropertyListPayload.encode(["huge": NSNumber(value: UInt64.max)], channel: .message)
        }
        #expect(throws: WCError(.payloadUnsupportedTypes)) {
            _ = try PropertyListPayload.encode(["nan": NSNumber(value: Double.nan)], channel: .message)
        }
    }

    /// NaN, the infinities and integers above Int64.max are of property-list types: the error
    /// names the value the JSON wire cannot carry, not the type (it used to say "unsupported
    /// type: Double", a type every other double is sent as).
    static func unrepresentable(_ shown: String) -> Any {
        let values: [String: Any] = [
            "nan": Double.nan, "inf": Double.infinity, "-inf": -Float.infinity,
            "18446744073709551615": UInt64.max, "9223372036854775808": UInt(1) << 63,
            "NSNumber nan": NSNumber(value: Double.nan), "NSNumber 18446744073709551615": NSNumber(value: UInt64.max),
        ]
        return values[shown]!
    }

    @Test(arguments: [
        "nan", "inf", "-inf", "18446744073709551615", "9223372036854775808", "NSNumber nan",
        "NSNumber 18446744073709551615",
    ])
    func numbersJSONCannotCarryAreSaidByValue(_ key: String) throws {
        let error = try #require(throws: WCError.self) {
            _ = try PropertyListPayload.encode(["score": Self.unrepresentable(key)], channel: .context)
        }
        let shown = key.replacingOccurrences(of: "NSNumber ", with: "")
        #expect(error.code == .payloadUnsupportedTypes)
        #expect(error.localizedDescription.contains("the number \(shown),"), "\(error.localizedDescription)")
        #expect(!error.localizedDescription.contains("unsupported type"))
    }

    @Test func aTopLevelDictionaryWithOneDollarKeyRoundTrips() throws {
        let payload = try PropertyListPayload.encode(["$date": "not a date"], channel: .message)
        #expect(payload.members["dict"] == .object(["$dict": .object(["$date": .string("not a date")])]))
        let back = PropertyListPayload.dictionary(of: payload)
        #expect(back.count == 1 && back["$date"] as? String == "not a date")
    }

    /// The wc.* vectors (Protocol/vectors/valid/payload) decode to dictionaries that encode back
    /// to the same `dict`: the Swift side writes what the schema describes.
    @Test(arguments: ["wc.userInfo", "wc.context", "wc.message", "wc.reply"])
    func theWatchConnectivityVectorsRoundTrip(_ kind: String) throws {
        let url = repositoryRoot.appendingPathComponent("Protocol/vectors/valid/payload/\(kind).json")
        guard case .object(let members) = try JSONParser.parse(Array(try Data(contentsOf: url))) else {
            throw TestFailure("\(kind).json is not an object")
        }
        let payload = Payload(members: members)
        let dictionary = PropertyListPayload.dictionary(of: payload)
        let channel = try #require(PropertyListPayload.Channel(rawValue: kind))
        #expect(try PropertyListPayload.encode(dictionary, channel: channel).members["dict"] == members["dict"])
    }

    @Test func everyWatchConnectivityVectorIsAChannelOfTheModule() throws {
        let directory = repositoryRoot.appendingPathComponent("Protocol/vectors/valid/payload")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("wc.") }
        #expect(names.count == 9)
        for name in names {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            let kind = try JSONParser.parse(bytes)["kind"]?.stringValue
            #expect(kind.flatMap(PropertyListPayload.Channel.init(rawValue:)) != nil, "\(name)")
            #expect(kind.map { $0 + ".json" } == name)
        }
    }

    @Test func messageDataVectorsCarryTheirBytes() throws {
        let url = repositoryRoot.appendingPathComponent("Protocol/vectors/valid/payload/wc.messageData.json")
        guard case .object(let members) = try JSONParser.parse(Array(try Data(contentsOf: url))) else {
            throw TestFailure("not an object")
        }
        #expect(PropertyListPayload.data(of: Payload(members: members)) == Data([1, 2, 3]))
    }

    struct NotAPropertyList {}

    static func unsupported(_ key: String) -> Any {
        let values: [String: Any] = [
            "url": URL(fileURLWithPath: "/tmp"), "null": NSNull(), "custom": NotAPropertyList(),
            "deep": [["inside": UUID()]], "nan": Double.nan, "optional": Optional<Int>.none as Any,
        ]
        return values[key]!
    }

    @Test(arguments: ["url", "null", "custom", "deep", "nan", "optional"])
    func otherTypesArePayloadUnsupportedTypes(_ key: String) {
        let dict: [String: Any] = ["fine": 1, key: Self.unsupported(key)]
        #expect(throws: WCError(.payloadUnsupportedTypes)) {
            _ = try PropertyListPayload.encode(dict, channel: .message)
        }
    }

    @Test func errorsCarryApplesDomainCodesAndMatchByCode() {
        let error: any Error = WCError(.notReachable)
        #expect(WCError.Code.genericError.rawValue == 7001 && WCError.Code.companionAppNotInstalled.rawValue == 7018)
        #expect(WCError.Code.allCases.map(\.rawValue) == Array(7001...7019))
        let ns = error as NSError
        #expect(ns.domain == WCErrorDomain && ns.domain == "WCErrorDomain" && ns.code == 7007)
        // Apple's bridged WCError answers `userInfo` as an NSError does.
        let described = WCError(.payloadTooLarge, userInfo: [NSLocalizedDescriptionKey: "too big"])
        #expect(described.userInfo[NSLocalizedDescriptionKey] as? String == "too big")
        #expect((error as? WCError)?.userInfo[NSLocalizedDescriptionKey] as? String == ns.localizedDescription)
        var matched = false
        do { throw error } catch WCError.notReachable { matched = true } catch {}
        #expect(matched)
        #expect(WCSessionActivationState.activated.rawValue == 2 && WCSessionActivationState.inactive.rawValue == 1)
    }

    /// A test fake's error (`NSError` in `WCErrorDomain`), or a `WCError` that went through
    /// `as NSError`, matches `catch WCError.notReachable` as Apple's bridged error does.
    @Test func anNSErrorInWCErrorDomainMatchesByCode() {
        let fake: any Error = NSError(domain: WCErrorDomain, code: 7007, userInfo: nil)
        let roundTrip: any Error = WCError(.payloadTooLarge) as NSError
        var matched: [String] = []
        do { throw fake } catch WCError.payloadTooLarge { matched.append("wrong") } catch WCError.notReachable { matched.append("fake") } catch {}
        do { throw roundTrip } catch WCError.payloadTooLarge { matched.append("roundTrip") } catch {}
        #expect(matched == ["fake", "roundTrip"])
        // Another domain with the same number is not a WCError.
        #expect(!(WCError.Code.notReachable ~= NSError(domain: "Other", code: 7007)))
    }
}
