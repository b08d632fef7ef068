/// Reads typed fields out of a JSON object, naming the offending field on failure.
///
/// Every failure is a ``ProtocolError`` with code `bad_frame` and the field's dotted path,
/// so a frame decoder is a list of `try r.string("id")` lines and nothing else.
public struct ObjectReader: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    /// The dotted path of this object inside the frame (empty at the top).
    public let path: String
    /// The frame's `id`, if readable, so errors can carry `re`.
    public var frameID: String?

    public init(_ members: [String: JSONValue], path: String = "", frameID: String? = nil) {
        self.members = members
        self.path = path
        self.frameID = frameID
    }

    /// Reads `value` as an object, or fails naming `path`.
    public init(_ value: JSONValue, path: String, frameID: String? = nil) throws(ProtocolError) {
        guard case .object(let o) = value else {
            if path.isEmpty { throw ProtocolError(.badFrame, "a frame must be a JSON object", re: frameID) }
            throw ProtocolError(.badFrame, field: path, "field '\(path)' must be an object", re: frameID)
        }
        self.init(o, path: path, frameID: frameID)
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func missing(_ key: String) -> ProtocolError {
        ProtocolError(.badFrame, field: name(key), "missing field '\(name(key))'", re: frameID)
    }

    /// A failure naming `key`, e.g. "field 'seq' must be an integer ≥ 1".
    public func invalid(_ key: String, _ expectation: String) -> ProtocolError {
        ProtocolError(.badFrame, field: name(key), "field '\(name(key))' must be \(expectation)", re: frameID)
    }

    /// A present member, or `nil` when absent; `null` counts as absent only where `nullable`
    /// (GitHub's models), and is `bad_frame` elsewhere (protocol fields are omitted, not null).
    private func optional(_ key: String, nullable: Bool, _ expectation: String) throws(ProtocolError) -> JSONValue? {
        guard let v = members[key] else { return nil }
        if v == .null {
            if nullable { return nil }
            throw invalid(key, expectation + " (omit it rather than send null)")
        }
        return v
    }

    /// Whether `key` is present and not null.
    public func has(_ key: String) -> Bool {
        if let v = members[key], v != .null { return true }
        return false
    }

    // MARK: - Strings

    public func string(_ key: String, length: ClosedRange<Int>? = nil) throws(ProtocolError) -> String {
        guard let v = members[key], v != .null else { throw missing(key) }
        return try stringValue(v, key, length)
    }

    public func optionalString(_ key: String, length: ClosedRange<Int>? = nil, nullable: Bool = false)
        throws(ProtocolError) -> String?
    {
        guard let v = try optional(key, nullable: nullable, expectation(length)) else { return nil }
        return try stringValue(v, key, length)
    }

    private func stringValue(_ v: JSONValue, _ key: String, _ length: ClosedRange<Int>?) throws(ProtocolError) -> String {
        guard case .string(let s) = v else { throw invalid(key, expectation(length)) }
        // Lengths count Unicode scalars (code points), as JSON Schema does.
        if let length, !length.contains(s.unicodeScalars.count) { throw invalid(key, expectation(length)) }
        return s
    }

    private func expectation(_ length: ClosedRange<Int>?) -> String {
        guard let length else { return "a string" }
        return "a string of \(length.lowerBound)–\(length.upperBound) characters"
    }

    /// A frame id or reference: a string of 1–64 characters.
    public func id(_ key: String = "id") throws(ProtocolError) -> String {
        try string(key, length: 1...64)
    }

    public func optionalID(_ key: String = "id") throws(ProtocolError) -> String? {
        try optionalString(key, length: 1...64)
    }

    // MARK: - Numbers and booleans

    public func int(_ key: String, min: Int64 = .min) throws(ProtocolError) -> Int64 {
        guard let v = members[key], v != .null else { throw missing(key) }
        return try intValue(v, key, min)
    }

    public func optionalInt(_ key: String, min: Int64 = .min) throws(ProtocolError) -> Int64? {
        guard let v = try optional(key, nullable: false, intExpectation(min)) else { return nil }
        return try intValue(v, key, min)
    }

    private func intExpectation(_ min: Int64) -> String { min == .min ? "an integer" : "an integer ≥ \(min)" }

    /// An integer; an integral number such as `42.0` counts (JSON Schema semantics).
    private func intValue(_ v: JSONValue, _ key: String, _ min: Int64) throws(ProtocolError) -> Int64 {
        guard let i = v.intValue, i >= min else { throw invalid(key, intExpectation(min)) }
        return i
    }

    public func bool(_ key: String) throws(ProtocolError) -> Bool {
        guard let v = members[key], v != .null else { throw missing(key) }
        guard case .bool(let b) = v else { throw invalid(key, "a boolean") }
        return b
    }

    public func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let v = try optional(key, nullable: false, "a boolean") else { return nil }
        guard case .bool(let b) = v else { throw invalid(key, "a boolean") }
        return b
    }

    // MARK: - Structure

    public func object(_ key: String) throws(ProtocolError) -> ObjectReader {
        guard let v = members[key], v != .null else { throw missing(key) }
        return try ObjectReader(v, path: name(key), frameID: frameID)
    }

    public func optionalObject(_ key: String) throws(ProtocolError) -> ObjectReader? {
        guard let v = try optional(key, nullable: false, "an object") else { return nil }
        return try ObjectReader(v, path: name(key), frameID: frameID)
    }

    public func array(_ key: String) throws(ProtocolError) -> [JSONValue] {
        guard let v = members[key], v != .null else { throw missing(key) }
        guard case .array(let a) = v else { throw invalid(key, "an array") }
        return a
    }

    /// An array of strings.
    public func strings(_ key: String) throws(ProtocolError) -> [String] {
        var out: [String] = []
        for v in try array(key) {
            guard case .string(let s) = v else { throw invalid(key, "an array of strings") }
            out.append(s)
        }
        return out
    }

    /// An array of objects, each decoded by `decode` with its indexed path (`users[3]`).
    public func objects<T>(_ key: String, _ decode: (ObjectReader) throws(ProtocolError) -> T) throws(ProtocolError) -> [T] {
        var out: [T] = []
        for (i, v) in try array(key).enumerated() {
            out.append(try decode(try ObjectReader(v, path: "\(name(key))[\(i)]", frameID: frameID)))
        }
        return out
    }

    /// A timestamp in ISO-8601 UTC.
    public func timestamp(_ key: String) throws(ProtocolError) -> Timestamp {
        let s = try string(key)
        guard let t = Timestamp(iso8601: s) else { throw invalid(key, "an ISO-8601 timestamp") }
        return t
    }

    /// A raw-representable wire value restricted to `allowed`.
    public func oneOf<T: RawRepresentable>(_ key: String, _ allowed: [T]) throws(ProtocolError) -> T
    where T.RawValue == String {
        let s = try string(key)
        guard let v = allowed.first(where: { $0.rawValue == s }) else {
            throw invalid(key, "one of " + allowed.map { "'\($0.rawValue)'" }.joined(separator: ", "))
        }
        return v
    }
}

/// Builds a JSON object, skipping optional members that are `nil`.
public struct ObjectBuilder {
    public private(set) var members: [String: JSONValue] = [:]
    public init() {}

    public subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    public mutating func set(_ key: String, _ value: String?) { if let value { members[key] = .string(value) } }
    public mutating func set(_ key: String, _ value: Int64?) { if let value { members[key] = .int(value) } }
    public mutating func set(_ key: String, _ value: Int?) { if let value { members[key] = .int(Int64(value)) } }
    public mutating func set(_ key: String, _ value: Bool?) { if let value { members[key] = .bool(value) } }
    public mutating func set(_ key: String, _ value: Timestamp?) { if let value { members[key] = .string(value.iso8601) } }
    public mutating func set<T: RawRepresentable>(_ key: String, _ value: T?) where T.RawValue == String {
        if let value { members[key] = .string(value.rawValue) }
    }
    public mutating func set(_ key: String, _ value: (some JSONRepresentable)?) { if let value { members[key] = value.json } }

    public var json: JSONValue { .object(members) }
}

/// A wire type with an explicit JSON mapping; its `Codable` conformance goes through it,
/// so `JSONEncoder`/`JSONDecoder` on any platform agree with the project's codec.
public protocol JSONRepresentable: Codable, Sendable {
    /// Decodes from an object, failing with the offending field's dotted path.
    init(reader: ObjectReader) throws(ProtocolError)
    /// The JSON form.
    var json: JSONValue { get }
}

extension JSONRepresentable {
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        do {
            try self.init(json: value)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Decodes from a JSON value, failing with the offending field's name.
    public init(json: JSONValue) throws(ProtocolError) {
        try self.init(reader: ObjectReader(json, path: ""))
    }

    /// The compact, key-sorted JSON bytes.
    public var jsonBytes: [UInt8] { JSONWriter.encode(json) }
}
