import RelayProtocol

extension RelayState {
    // MARK: - pair.begin

    mutating func pairBegin(_ f: Request, on link: LinkID) throws(ProtocolError) {
        guard links[link]?.session?.role == .phone else {
            throw ProtocolError(.notSupported, "only a phone can begin pairing; a watch joins with pair.join", re: f.id)
        }
        pruneCodes()
        if let old = links[link]?.pairingCode { voidCode(old) }
        var code = environment.pairingCode()
        var attempts = 0
        while codes[code] != nil, attempts < 1000 {
            code = environment.pairingCode()
            attempts += 1
        }
        guard codes[code] == nil else { throw ProtocolError(.internal, "could not make a unique pairing code", re: f.id) }
        let expiresAt = now.adding(milliseconds: configuration.pairingCodeTTLms)
        codes[code] = PendingCode(link: link, expiresAt: expiresAt)
        links[link]?.pairingCode = code
        emit(.pairCode(PairCode(re: f.id, code: code, expiresAt: expiresAt)), to: link)
    }

    /// Voids `code` (its phone asked for another, or its connection closed). One that already
    /// expired stays remembered as expired (§6.3, check 2 before check 4): a watch typing it
    /// after the phone moved on gets `pairing_code_expired`, not a wrong code counted against it.
    mutating func voidCode(_ code: String) {
        guard let pending = codes[code] else { return }
        if pending.expiresAt > now { codes[code] = nil }
    }

    /// How long an expired code is remembered: a try of it meanwhile is `pairing_code_expired`,
    /// after that `pairing_code_invalid`.
    static let expiredCodeMemoryMs: Int64 = 10 * 60_000

    /// Drops the relay-wide wrong codes that left the window (the oldest first: no walk), and at
    /// most once a minute forgets long-expired codes and stale address counts. Those sweeps walk
    /// every code and address, so they are not run per `pair.begin`/`pair.join` (one per
    /// connection can be live: 10,000 codes made each frame copy them all); every lookup checks
    /// the times itself (``rememberedCode(_:)``, ``recentAddressFailures(_:)``).
    private mutating func pruneCodes() {
        let lifetimeAgo = now.adding(milliseconds: -configuration.pairingCodeTTLms)
        while let oldest = relayFailures.first, oldest <= lifetimeAgo { _ = relayFailures.removeFirst() }
        guard now >= nextPairingSweep else { return }
        nextPairingSweep = now.adding(milliseconds: Self.addressWindowMs)
        let horizon = now.adding(milliseconds: -Self.expiredCodeMemoryMs)
        codes = codes.filter { $0.value.expiresAt > horizon }
        addressLockedUntil = addressLockedUntil.filter { $0.value > now }
        let minuteAgo = now.adding(milliseconds: -Self.addressWindowMs)
        addressFailures = addressFailures.compactMapValues { times in
            let recent = times.filter { $0 > minuteAgo }
            return recent.isEmpty ? nil : recent
        }
    }

    /// The code, unless it expired longer ago than codes are remembered (a sweep may not have
    /// dropped it yet).
    private func rememberedCode(_ code: String) -> PendingCode? {
        guard let pending = codes[code], pending.expiresAt > now.adding(milliseconds: -Self.expiredCodeMemoryMs) else { return nil }
        return pending
    }

    /// `address`'s wrong codes within the last minute (older ones dropped here, not only by a sweep).
    private mutating func recentAddressFailures(_ address: String) -> Int {
        guard let times = addressFailures[address] else { return 0 }
        let minuteAgo = now.adding(milliseconds: -Self.addressWindowMs)
        let recent = times.filter { $0 > minuteAgo }
        addressFailures[address] = recent.isEmpty ? nil : recent
        return recent.count
    }

    // MARK: - pair.join

    mutating func pairJoin(_ f: PairJoin, on link: LinkID) throws(ProtocolError) {
        guard let l = links[link], l.session?.role == .watch else {
            throw ProtocolError(.notSupported, "only a watch joins; a phone begins with pair.begin", re: f.id)
        }
        pruneCodes()
        if let until = l.lockedUntil {
            if until > now {
                throw ProtocolError(.pairingLocked, "too many wrong codes on this connection; \(lockText(until))", re: f.id)
            }
            links[link]?.lockedUntil = nil
            links[link]?.wrongCodes = 0
        }
        if let until = addressLockedUntil[l.address], until > now {
            throw ProtocolError(.pairingLocked, "too many wrong codes from this address; \(lockText(until))", re: f.id)
        }
        if let until = relayLockedUntil {
            throw ProtocolError(
                .pairingLocked, "too many wrong codes on this relay (a guessing attack?); \(lockText(until))", re: f.id)
        }
        let wellFormed = PairCode.isWellFormed(f.code)
        let pending = wellFormed ? rememberedCode(f.code) : nil
        if let pending, pending.expiresAt <= now {
            // Kept (until `pruneCodes`), also once its phone asked for another or left: every
            // later try of it is `expired` too, never a wrong code.
            throw ProtocolError(.pairingCodeExpired, "the pairing code expired; begin again on the phone", re: f.id)
        }
        guard let pending, links[pending.link]?.phase == .ready else {
            let lock = wrongCode(on: link)
            let what = wellFormed ? "no such pairing code" : "not a pairing code: a code is the 6 digits the phone shows"
            throw ProtocolError(.pairingCodeInvalid, what + (lock.map { "; \($0)" } ?? ""), re: f.id)
        }
        codes[f.code] = nil
        links[pending.link]?.pairingCode = nil
        makePair(phone: pending.link, watch: link, joinID: f.id)
    }

    /// Until when every `pair.join` on the relay is locked, if the relay-wide limit is reached:
    /// `wrongCodesPerRelay` wrong codes within the last code lifetime. The oldest of them
    /// leaving the window ends the lock.
    var relayLockedUntil: Timestamp? {
        guard relayFailures.count >= configuration.wrongCodesPerRelay, let oldest = relayFailures.first else { return nil }
        let until = oldest.adding(milliseconds: configuration.pairingCodeTTLms)
        return until > now ? until : nil
    }

    /// "pair.join is locked until …": the absolute time (§3.5) and the seconds left.
    private func lockText(_ until: Timestamp) -> String {
        let seconds = (until.millisecondsSinceEpoch - now.millisecondsSinceEpoch + 999) / 1000
        return "pair.join is locked until \(until) (\(seconds) s from now)"
    }

    /// How long a wrong code counts against its address: one minute (§6.3).
    static let addressWindowMs: Int64 = 60_000

    /// Counts a wrong code against the connection, its address and the relay; locks past the
    /// limits. Returns what the wrong code locked, said for the user (`nil` if nothing).
    ///
    /// The address and relay counts are stored (``StoreMutation/recordWrongPairingCode(_:)``).
    /// A wrong code that locks the address or the relay is answered once it is stored: the
    /// answer promises a lock that must outlive a restart. One that only counts is answered at
    /// once (`.persistAhead`): guessing is not slowed to the store's pace, and a count lost to
    /// a crash only makes a lock come one code later.
    private mutating func wrongCode(on link: LinkID) -> String? {
        guard var l = links[link] else { return nil }
        var locked: [String] = []
        l.wrongCodes += 1
        if l.wrongCodes >= configuration.wrongCodesPerLink {
            let until = now.adding(milliseconds: configuration.lockoutMs)
            l.lockedUntil = until
            locked.append("that was wrong code \(l.wrongCodes) on this connection: \(lockText(until))")
        }
        links[link] = l
        let failures = recentAddressFailures(l.address) + 1
        let addressLock = failures >= configuration.wrongCodesPerAddress ? now.adding(milliseconds: configuration.lockoutMs) : nil
        let counted = max(Self.addressWindowMs, configuration.pairingCodeTTLms)
        let wrong = WrongPairingCode(
            address: l.address, at: now, addressLockedUntil: addressLock,
            countsUntil: max(now.adding(milliseconds: counted), addressLock ?? now))
        countWrongCode(wrong)
        if let addressLock {
            locked.append(
                "that was wrong code \(failures) from this address within \(Self.addressWindowMs / 1000) s:"
                    + " every connection from it is locked; \(lockText(addressLock))")
        }
        let relayLock = relayLockedUntil
        if let relayLock {
            locked.append(
                "that was wrong code \(relayFailures.count) on this relay within \(configuration.pairingCodeTTLms / 1000) s:"
                    + " pairing is paused for everyone; \(lockText(relayLock))")
        }
        if addressLock != nil || relayLock != nil {
            persist(.recordWrongPairingCode(wrong))
        } else {
            actions.append(.persistAhead(.recordWrongPairingCode(wrong)))
        }
        return locked.isEmpty ? nil : locked.joined(separator: "; ")
    }

    /// Counts `wrong` against its address and the relay: as it happens, and again for each
    /// stored one when the relay starts (so the locks it set hold again).
    mutating func countWrongCode(_ wrong: WrongPairingCode) {
        if let until = wrong.addressLockedUntil {
            addressLockedUntil[wrong.address] = until
            addressFailures[wrong.address] = nil
        } else {
            addressFailures[wrong.address, default: []].append(wrong.at)
        }
        relayFailures.append(wrong.at)
        while relayFailures.count > configuration.wrongCodesPerRelay { _ = relayFailures.removeFirst() }
    }

    private mutating func makePair(phone phoneLink: LinkID, watch watchLink: LinkID, joinID: String) {
        guard let phoneSession = links[phoneLink]?.session, let watchSession = links[watchLink]?.session else { return }
        // A device pairing again leaves its old pair.
        for session in [phoneSession, watchSession] {
            if let old = session.pairID {
                dissolve(
                    old, reason: "repaired", initiator: nil, initiatorRe: nil,
                    keep: [phoneLink, watchLink])
            }
        }
        let pairID = PairID(environment.identifier("pair"))
        let phoneToken = environment.token()
        let watchToken = environment.token()
        let record = PairRecord(
            id: pairID, createdAt: now,
            phone: DeviceRecord(
                id: DeviceID(environment.identifier("dev")), role: .phone, name: phoneSession.deviceName,
                tokenHash: environment.hashToken(phoneToken)),
            watch: DeviceRecord(
                id: DeviceID(environment.identifier("dev")), role: .watch, name: watchSession.deviceName,
                tokenHash: environment.hashToken(watchToken)))
        persist(.insertPair(record))
        pairs[pairID] = PairState(record: record)
        register(record)
        for (link, device) in [(phoneLink, record.phone.id), (watchLink, record.watch.id)] {
            links[link]?.session?.pairID = pairID
            links[link]?.session?.deviceID = device
            deviceLinks[device] = link
        }
        let watchPresence = presence(of: record.watch.id)
        emit(
            .paired(
                Paired(
                    pairID: pairID.rawValue, token: phoneToken,
                    peer: PeerInfo(
                        name: record.watch.name, connected: true, reachable: watchPresence.reachable))), to: phoneLink)
        emit(
            .paired(
                Paired(
                    re: joinID, pairID: pairID.rawValue, token: watchToken,
                    peer: PeerInfo(name: record.phone.name, connected: true, reachable: true))), to: watchLink)
    }

    // MARK: - unpair

    mutating func unpair(_ f: Request, on link: LinkID) throws(ProtocolError) {
        guard let session = links[link]?.session, let pairID = session.pairID else {
            throw ProtocolError(.notPaired, "this device is not paired", re: f.id)
        }
        dissolve(pairID, reason: "unpair", initiator: link, initiatorRe: f.id)
    }

    /// Dissolves a pair: revokes both tokens, discards its items and pending replies, tells
    /// the connected members (`unpaired`), and closes the member left behind with 4002.
    ///
    /// `initiator` stays connected, unpaired; connections in `keep` (devices pairing again)
    /// are rebound by the caller and get no `unpaired`.
    mutating func dissolve(
        _ pairID: PairID, reason: String, initiator: LinkID?, initiatorRe: String?, keep: Set<LinkID> = []
    ) {
        guard let pair = pairs[pairID] else { return }
        // First: the `unpaired` frames below wait for it to be committed (both devices drop
        // their tokens when they get one; sent before, a kill -9 left a pair nobody could reach).
        persist(.deletePair(pairID))
        var leftBehind: [LinkID] = []
        for device in [pair.record.phone, pair.record.watch] {
            guard let link = deviceLinks[device.id] else { continue }
            deviceLinks[device.id] = nil
            links[link]?.session?.pairID = nil
            links[link]?.session?.deviceID = nil
            if link == initiator {
                emit(.unpaired(Unpaired(re: initiatorRe, reason: reason)), to: link)
            } else if !keep.contains(link) {
                emit(.unpaired(Unpaired(reason: reason)), to: link)
                leftBehind.append(link)
            }
        }
        replies.removeAll(of: pairID)
        queuedBytesTotal -= pair.toWatch.queuedBytes + pair.toPhone.queuedBytes
        for device in [pair.record.phone, pair.record.watch] {
            tokens[device.tokenHash] = nil
            devices[device.id] = nil
        }
        pairs[pairID] = nil
        for link in leftBehind { close(link, code: .unpaired, reason: "unpaired") }
    }
}
