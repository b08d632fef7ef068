import RelayProtocol

extension RelayState {
    /// Live connections that said `hello`, by role.
    public var connectionsByRole: [Role: Int] {
        var out: [Role: Int] = [.phone: 0, .watch: 0]
        for l in links.values where l.phase == .ready {
            if let role = l.session?.role { out[role, default: 0] += 1 }
        }
        return out
    }

    /// Durable items stored and not yet acked, by mode.
    public var queuedItemsByMode: [DeliveryMode: Int] {
        var out: [DeliveryMode: Int] = [.context: 0, .userInfo: 0, .complication: 0]
        for pair in pairs.values {
            for (mode, n) in pair.toWatch.heldByMode { out[mode, default: 0] += n }
            for (mode, n) in pair.toPhone.heldByMode { out[mode, default: 0] += n }
        }
        return out
    }
}
