import Foundation
import RelayProtocol
import TestSupport
import Testing

/// A conformance vector from `Protocol/vectors/`.
struct Vector: Sendable, CustomTestStringConvertible {
    /// Path relative to `Protocol/vectors/`.
    var name: String
    var bytes: [UInt8]
    var testDescription: String { name }
}

/// The sidecar of an invalid vector: what the relay must answer.
struct Expectation: Sendable, Decodable {
    var code: String
    var field: String?
    var stage: String
    var setup: String?
    var closes: Int?
    var binary: Bool?
}

struct InvalidVector: Sendable, CustomTestStringConvertible {
    var vector: Vector
    var expect: Expectation
    var testDescription: String { vector.name }
}

/// Loads the vectors from the repository (relative to this file).
enum Vectors {
    static let root = repositoryRoot.appendingPathComponent("Protocol/vectors")

    static func files(_ dir: String, ext: String = "json") -> [Vector] {
        let base = root.appendingPathComponent(dir)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        return names.filter { $0.hasSuffix("." + ext) && !$0.hasSuffix(".expect.json") }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: base.appendingPathComponent(name).path) else {
                return nil
            }
            return Vector(name: "\(dir)/\(name)", bytes: Array(data))
        }
    }

    static let validClient = files("valid/client")
    static let validRelay = files("valid/relay")
    static let validPayload = files("valid/payload")

    static let invalid: [InvalidVector] = (files("invalid") + files("invalid", ext: "bin")).compactMap { v in
        let stem = (v.name as NSString).deletingPathExtension
        let sidecar = root.appendingPathComponent(stem + ".expect.json")
        guard let data = FileManager.default.contents(atPath: sidecar.path),
            let expect = try? JSONDecoder().decode(Expectation.self, from: data)
        else { return nil }
        return InvalidVector(vector: v, expect: expect)
    }

    /// The file name's frame type: `send.context-at-limit.json` → `send`; `pair.begin.json` → `pair.begin`.
    static func typePrefix(_ name: String, known: [String]) -> String? {
        let file = (name as NSString).lastPathComponent
        return known.sorted { $0.count > $1.count }.first { file == $0 + ".json" || file.hasPrefix($0 + ".") }
    }
}
