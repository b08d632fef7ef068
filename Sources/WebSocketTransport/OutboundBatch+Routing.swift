/// A message or close taken out of an ``OutboundBatch`` (see
/// ``OutboundBatch/removeItems(where:)``), for a connection that is not this server's.
public enum OutboundItem: Sendable, Hashable {
    case text(ConnectionID, [UInt8])
    case close(ConnectionID, code: UInt16, reason: String)
}

extension OutboundBatch {
    /// Removes the text messages and closes addressed to connections `isElsewhere` picks and
    /// returns them in order; everything else stays, in order.
    ///
    /// For a handler that also serves connections of other processes (the relay's cluster: a
    /// node forwards them by Redis pub/sub) under IDs lws never hands out.
    public mutating func removeItems(where isElsewhere: (ConnectionID) -> Bool) -> [OutboundItem] {
        var taken: [OutboundItem] = []
        var kept: [Command] = []
        for command in commands {
            switch command {
            case .send(let id, let message) where message.kind == .text && isElsewhere(id):
                taken.append(.text(id, message.payloadArray))
            case .close(let id, let code, let reason) where isElsewhere(id):
                taken.append(.close(id, code: code, reason: reason))
            default:
                kept.append(command)
            }
        }
        if !taken.isEmpty { commands = kept }
        return taken
    }
}
