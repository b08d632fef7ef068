import RelayProtocol

/// Faults a developer injects at run time (the console): reachability forced off and a
/// complication budget set by hand. Each setter returns the actions to perform, like ``handle(_:now:)``.
extension RelayState {
    /// Complication transfers `pairID` has left now: the fault's value if one is set, else
    /// the rolling 24 h budget minus the uses within it.
    mutating func complicationsLeft(_ pairID: PairID) -> Int {
        if let left = complicationBudgetLeft[pairID] { return max(0, left) }
        let used = pairs[pairID]?.complicationsUsed(at: now) ?? 0
        return max(0, configuration.limits.complicationsPerDay - used)
    }

    /// Reports `device` as not reachable while it stays connected (or lifts that); its peer
    /// gets a `peer` frame when its view changes, and messages to it fail with `not_reachable`.
    public mutating func setForcedUnreachable(_ device: DeviceID, _ forced: Bool, now: Timestamp) -> [RelayAction] {
        self.now = now
        actions = []
        let before = presence(of: device)
        if forced { forcedUnreachable.insert(device) } else { forcedUnreachable.remove(device) }
        let after = presence(of: device)
        if before != after { notifyPeer(of: device, presence: after) }
        let out = actions
        actions = []
        return out
    }

    /// Sets the complication transfers `pair` has left (`nil`: back to the rolling budget).
    /// Devices learn it from the next `accepted` or `welcome`, as with the real budget.
    public mutating func setComplicationBudgetLeft(_ pair: PairID, _ left: Int?) {
        complicationBudgetLeft[pair] = left.map { max(0, $0) }
    }

    /// The devices forced unreachable now.
    public var devicesForcedUnreachable: Set<DeviceID> { forcedUnreachable }

    /// The live connection of `device`, if it has one.
    public func link(of device: DeviceID) -> LinkID? {
        guard let link = deviceLinks[device], links[link]?.phase == .ready else { return nil }
        return link
    }

    /// Whether the core would take `reply` on `link` and deliver it: it answers a message
    /// waiting there for its reply, within the limits (a `no-reply` fault swallows only such
    /// a reply; the core refuses any other as without the fault).
    public func awaitsReply(_ reply: ClientReply, on link: LinkID) -> Bool {
        guard links[link]?.phase == .ready, let m = member(of: link),
            (try? configuration.limits.check(.reply(reply))) != nil
        else { return false }
        let key = ReplyKey(pair: m.pair, requesterRole: m.role.peer, sendID: ExactID(reply.re))
        return replies[key]?.replier == link
    }

    /// The paired device on `link`: its id, pair and role (nil before `hello` or unpaired).
    public func member(of link: LinkID) -> (device: DeviceID, pair: PairID, role: Role)? {
        guard let s = links[link]?.session, let device = s.deviceID, let pair = s.pairID else { return nil }
        return (device, pair, s.role)
    }
}
