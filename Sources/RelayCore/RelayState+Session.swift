import RelayProtocol

extension RelayState {
    // MARK: - hello

    /// PROTOCOL.md §5.1: the relay keeps a device's latest name (its peer's next `welcome`
    /// shows it). It was kept only for the session and the pair showed its name at pairing.
    ///
    /// §7.1: a `hello` with a device's token means its app runs, so it is installed (again).
    /// Returns whether the app was not installed until now (its peer must hear it).
    mutating func keepName(_ name: String, of role: Role, in pairID: PairID) -> Bool {
        guard var record = pairs[pairID]?.record else { return false }
        let reinstalled = !record.device(role).appInstalled
        guard record.device(role).name != name || reinstalled else { return false }
        if role == .phone {
            record.phone.name = name
            record.phone.appInstalled = true
        } else {
            record.watch.name = name
            record.watch.appInstalled = true
        }
        updatePair(pairID) { $0.record = record }
        persist(.insertPair(record))
        return reinstalled
    }

    mutating func hello(_ h: Hello, on link: LinkID) throws(ProtocolError) {
        guard h.protocol == 1 else {
            close(
                link, after: ProtocolError(.unsupportedProtocol, "protocol \(h.protocol) is not supported; speak 1", re: h.id),
                reason: "unsupported protocol")
            return
        }
        // Named in the welcome only: not kept (a string on the heap for every connection).
        let sessionID = environment.identifier("s")
        var session = Session(
            role: h.role, deviceName: h.deviceName, foreground: h.role == .watch ? (h.foreground ?? true) : true)
        var replacedPresence: Presence?
        var reinstalled = false
        if let token = h.token {
            guard let device = tokens[environment.hashToken(token)], let member = devices[device],
                member.role == h.role, hasPair(member.pair)
            else {
                close(link, after: ProtocolError(.unauthorized, "unknown or revoked token", re: h.id), reason: "unauthorized")
                return
            }
            session.pairID = member.pair
            session.deviceID = device
            reinstalled = keepName(h.deviceName, of: h.role, in: member.pair)
            if let old = deviceLinks[device], old != link {
                replacedPresence = presence(of: device)
                detach(old, notifyPeer: false)
                close(old, code: .replaced, reason: "replaced by a newer connection")
            }
            deviceLinks[device] = link
        }
        links[link]?.session = session
        links[link]?.phase = .ready

        guard let pairID = session.pairID, let deviceID = session.deviceID, var pair = pairs[pairID] else {
            emit(
                .welcome(
                    Welcome(
                        re: h.id, session: sessionID, role: h.role, paired: false,
                        limits: limitsAnnounced(for: nil))), to: link)
            return
        }
        let peerRole = h.role.peer
        let peerDevice = pair.record.device(peerRole)
        let peerState = presence(of: peerDevice.id)
        if pair[peerRole].lastSentContext != nil || !pair[peerRole].sent.isEmpty || !pair[h.role].pendingTransferred.isEmpty {
            // The welcome's context and the items sent again below have seqs, and a pending
            // `transferred` comes from an ack: on this new connection they wait for whatever of
            // theirs is not yet committed (PROTOCOL.md §8.6, §8.7).
            actions.append(.awaitStore)
        }
        emit(
            .welcome(
                Welcome(
                    re: h.id, session: sessionID, role: h.role, paired: true, pairID: pairID.rawValue,
                    peer: PeerInfo(
                        name: peerDevice.name, connected: peerState.connected, reachable: peerState.reachable,
                        appInstalled: peerDevice.appInstalled),
                    limits: limitsAnnounced(for: pairID), context: pair[peerRole].lastSentContext)), to: link)

        // What this device owes or is owed: transferred first, then the backlog.
        if !pair[h.role].pendingTransferred.isEmpty {
            emit(.transferred(Transferred(ids: pair[h.role].pendingTransferred)), to: link)
            pair[h.role].pendingTransferred = []
            pairs[pairID] = pair
            persist(.clearPendingTransferred(pairID, direction: h.role))
        }
        // Nothing is in flight on a new connection. Reset before the ack: applying it pumps
        // the backlog, and a reset after that would send the same items a second time.
        updatePair(pairID) { $0[peerRole].resetInFlight() }
        if let lastSeq = h.lastSeq, lastSeq > 0, lastSeq <= pair[peerRole].lastSeq {
            applyAck(pairID, sender: peerRole, through: lastSeq)
        }
        pump(pairID, sender: peerRole)

        let after = presence(of: deviceID)
        if replacedPresence != after || reinstalled {
            notifyPeer(of: deviceID, presence: after)
        }
    }

    /// The limits as announced to a device, with the pair's complication budget left.
    mutating func limitsAnnounced(for pairID: PairID?) -> Limits {
        var limits = configuration.limits
        limits.windowItems = configuration.inFlightItems
        limits.windowBytes = configuration.inFlightBytes
        if let pairID, hasPair(pairID) {
            limits.complicationsRemaining = complicationsLeft(pairID)
        }
        return limits
    }

    // MARK: - Presence

    struct Presence: Equatable {
        var connected: Bool
        var reachable: Bool
    }

    /// Whether `device` is connected and reachable (a watch only while foreground).
    func presence(of device: DeviceID) -> Presence {
        guard let link = deviceLinks[device], let l = links[link], l.phase == .ready, let s = l.session else {
            return Presence(connected: false, reachable: false)
        }
        return Presence(connected: true, reachable: isReachable(s, device))
    }

    /// Whether the connected `device`, with session `s`, may be messaged: a phone always, a watch
    /// in the foreground, neither while a fault forces it unreachable.
    func isReachable(_ s: Session, _ device: DeviceID) -> Bool {
        s.awake && !isForcedUnreachable(device)
    }

    /// Whether a fault makes `device` unreachable while connected.
    func isForcedUnreachable(_ device: DeviceID) -> Bool {
        // (An empty set is not asked: `contains` hashes the id first, even then.)
        !forcedUnreachable.isEmpty && forcedUnreachable.contains(device)
    }

    /// Tells `device`'s peer (if connected) about `device`'s presence and whether its app is
    /// installed (§7.1).
    mutating func notifyPeer(of device: DeviceID, presence p: Presence) {
        guard let member = devices[device], let pair = pairs[member.pair] else { return }
        let peer = pair.record.device(member.role.peer).id
        guard let peerLink = deviceLinks[peer] else { return }
        let installed = pair.record.device(member.role).appInstalled
        emit(.peer(PeerChange(connected: p.connected, reachable: p.reachable, appInstalled: installed)), to: peerLink)
    }

    /// The connected link of the device of `role` in `pair`, if any.
    func connectedLink(of role: Role, in pair: PairID) -> LinkID? {
        guard let device = pairs[pair]?.record.device(role).id, let l = deviceLinks[device], links[l]?.phase == .ready else {
            return nil
        }
        return l
    }

    // MARK: - state

    mutating func stateChange(_ f: StateChange, on link: LinkID) throws(ProtocolError) {
        guard let session = links[link]?.session, session.role == .watch || f.foreground == nil else {
            throw ProtocolError(.notSupported, "only a watch reports foreground state", re: f.id)
        }
        if f.appInstalled == false { return appUninstalled(link, session) }
        guard let foreground = f.foreground else { return }  // `appInstalled: true`: the app runs
        guard let device = session.deviceID else {
            links[link]?.session?.foreground = foreground
            return
        }
        let before = presence(of: device)
        links[link]?.session?.foreground = foreground
        let after = presence(of: device)
        if before != after { notifyPeer(of: device, presence: after) }
    }

    /// §7.1: the device's app was uninstalled. The flag is stored, the connection closed (1000:
    /// the app is gone), and the peer hears both in one `peer` frame, after the commit.
    private mutating func appUninstalled(_ link: LinkID, _ session: Session) {
        if let pairID = session.pairID, var record = pairs[pairID]?.record {
            if session.role == .phone { record.phone.appInstalled = false } else { record.watch.appInstalled = false }
            updatePair(pairID) { $0.record = record }
            persist(.insertPair(record))
        }
        close(link, code: .normal, reason: "app uninstalled")
    }

    /// `faces` (PROTOCOL.md §10.1): only from a paired watch; otherwise no effect here. The
    /// relay's engine shows the picture on its console before the frame gets this far; a relay
    /// without a console accepts and forgets it (it never reaches the peer).
    mutating func faces(_ f: Faces, on link: LinkID) throws(ProtocolError) {
        // §4.1: the session's state (step 4) before what its role supports (step 5).
        guard member(of: link) != nil else {
            throw ProtocolError(.notPaired, "pair before publishing widget faces", re: f.id)
        }
        guard links[link]?.session?.role == .watch else {
            throw ProtocolError(.notSupported, "only a watch publishes widget faces", re: f.id)
        }
    }

    // MARK: - Closing

    /// The transport reports the connection gone.
    mutating func linkClosed(_ link: LinkID) {
        guard let l = links[link] else { return }
        if l.phase != .closing { detach(link) }
        links[link] = nil
        let left = addressConnections[l.address, default: 1] - 1
        addressConnections[l.address] = left > 0 ? left : nil
    }

    /// Unbinds a connection from its pairing code, device and pending replies.
    mutating func detach(_ link: LinkID, notifyPeer notify: Bool = true) {
        guard let l = links[link] else { return }
        if let code = l.pairingCode, codes[code]?.link == link {
            voidCode(code)
        }
        links[link]?.pairingCode = nil
        // Replies this connection owed: the requester learns at once; requests it made: dropped later.
        // Only its pair's requests can involve it (both ends of a request are that pair's).
        var owed: [(key: ReplyKey, pending: PendingReply)] = []
        if let pairID = l.session?.pairID {
            for key in replies.keys(of: pairID) {
                guard let pending = replies[key] else { continue }
                if pending.replier == link {
                    replies.remove(key)
                    owed.append((key, pending))
                } else if pending.requester == link {
                    replies.forgetRequester(key)
                }
            }
        }
        if let device = l.session?.deviceID, deviceLinks[device] == link {
            deviceLinks[device] = nil
            if let member = devices[device] {
                // Its unsent payloads wait in the store until it is back.
                let evicts = configuration.loadsPayloadsOnDemand
                updatePair(member.pair) { pair in
                    pair[member.role.peer].resetInFlight()
                    if evicts { pair[member.role.peer].evictUnsentPayloads() }
                }
            }
            if notify { notifyPeer(of: device, presence: Presence(connected: false, reachable: false)) }
        }
        // After the `peer` frame (as §13.2 shows), in the order the requests were sent.
        owed.sort { a, b in
            a.pending.deadline != b.pending.deadline
                ? a.pending.deadline < b.pending.deadline
                : a.key.sendID.text.utf8.lexicographicallyPrecedes(b.key.sendID.text.utf8)
        }
        for (key, pending) in owed {
            guard let r = pending.requester else { continue }
            emit(.error(ProtocolError(.notReachable, "the peer disconnected before replying", re: key.sendID.text).frame), to: r)
        }
    }
}
