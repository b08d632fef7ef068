import WebSocketTransport

/// The leader's table of connections that edge nodes forward (``ClusterMessage``): each
/// `EDGE:N` gets a ``ConnectionID`` from a range lws never hands out, so the engine treats it
/// as one of its own and the cluster node can tell where its frames go.
struct RemoteLinks {
    /// The first ID of forwarded connections (lws counts its own from 1).
    static let base: UInt64 = 1 << 62

    private var next = base
    private var byName: [String: ConnectionID] = [:]
    private var names: [ConnectionID: String] = [:]

    /// Whether `id` is a forwarded connection's.
    static func isRemote(_ id: ConnectionID) -> Bool { id.rawValue >= base }

    var isEmpty: Bool { names.isEmpty }

    /// Every forwarded connection, by ID.
    var all: [ConnectionID: String] { names }

    /// A new ID for `name`; nil if `name` is already open.
    mutating func open(_ name: String) -> ConnectionID? {
        guard byName[name] == nil else { return nil }
        let id = ConnectionID(rawValue: next)
        next += 1
        byName[name] = id
        names[id] = name
        return id
    }

    func id(of name: String) -> ConnectionID? { byName[name] }

    func name(of id: ConnectionID) -> String? { names[id] }

    /// Forgets `id`; returns its name if it was open.
    mutating func remove(_ id: ConnectionID) -> String? {
        guard let name = names.removeValue(forKey: id) else { return nil }
        byName[name] = nil
        return name
    }

    mutating func removeAll() {
        byName.removeAll()
        names.removeAll()
    }
}
