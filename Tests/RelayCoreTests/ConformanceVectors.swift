import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing

/// An invalid vector from `Protocol/vectors/invalid/` with its sidecar.
struct InvalidVector: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var code: ErrorCode
    var stage: String
    var setup: String?
    var closes: UInt16?
    var binary: Bool
    var testDescription: String { name }

    /// The `re` the relay must answer with: the top-level `id` when it is a valid id.
    var expectedRe: String? {
        guard let value = try? JSONParser.parse(bytes), case .string(let id)? = value["id"], (1...64).contains(id.count)
        else { return nil }
        return id
    }
}

/// Loads the conformance vectors from the repository, relative to this file.
enum ConformanceVectors {
    static let root = repositoryRoot.appendingPathComponent("Protocol/vectors")

    static let invalid: [InvalidVector] = {
        let dir = root.appendingPathComponent("invalid")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".expect.json") }.sorted().compactMap { sidecarName in
            let stem = String(sidecarName.dropLast(".expect.json".count))
            guard let sidecar = FileManager.default.contents(atPath: dir.appendingPathComponent(sidecarName).path),
                let expect = try? JSONParser.parse(Array(sidecar)),
                let code = expect["code"]?.stringValue, let stage = expect["stage"]?.stringValue
            else { return nil }
            let binary = expect["binary"]?.boolValue ?? false
            let file = dir.appendingPathComponent(stem + (binary ? ".bin" : ".json"))
            guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
            return InvalidVector(
                name: stem, bytes: Array(data), code: ErrorCode(rawValue: code), stage: stage,
                setup: expect["setup"]?.stringValue, closes: expect["closes"]?.intValue.map { UInt16($0) },
                binary: binary)
        }
    }()

    static let session = invalid.filter { $0.stage == "session" }
    static let codecAndLimits = invalid.filter { $0.stage == "codec" || $0.stage == "limits" }

    /// The valid client frames (`valid/client/*.json`).
    static let validClient: [[UInt8]] = {
        let dir = root.appendingPathComponent("valid/client")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap {
            FileManager.default.contents(atPath: dir.appendingPathComponent($0).path).map { Array($0) }
        }
    }()
}

extension RelayHarness {
    /// The connection under test in one of the session setups of PROTOCOL.md §14.3.
    mutating func link(inSetup setup: String, sourceLocation: SourceLocation = #_sourceLocation) -> LinkID? {
        switch setup {
        case "connected":
            return open()
        case "hello_phone_unpaired":
            return connect(.phone).0
        case "hello_watch_unpaired":
            return connect(.watch).0
        case "paired_phone_peer_offline", "paired_watch_peer_offline":
            let role: Role = setup == "paired_phone_peer_offline" ? .phone : .watch
            let (phone, watch) = pairDevices()
            close(phone)
            close(watch)
            return reconnect(role).0
        case "paired_phone_watch_background":
            let (phone, watch) = pairDevices()
            send(watch, .state(StateChange(foreground: false)))
            return phone
        case "paired_phone":
            return pairDevices().phone
        case "paired_watch":
            return pairDevices().watch
        default:
            Issue.record("unknown setup \(setup)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
