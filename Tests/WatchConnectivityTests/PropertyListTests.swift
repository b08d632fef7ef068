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
        var matched = false
        do { throw error } catch WCError.notReachable { matched = true } catch {}
        #expect(matched)
        #expect(WCSessionActivationState.activated.rawValue == 2 && WCSessionActivationState.inactive.rawValue == 1)
    }
}
