import RelayProtocol

/// Something that reached this device, in the order the relay sent it.
///
/// Durable deliveries (`applicationContext`, `userInfo`) must be acknowledged with
/// ``RelaySession/acknowledge(_:)`` once the app has handled them durably — like returning
/// from a `WCSessionDelegate` method; until then the relay keeps them and redelivers them
/// after a reconnect or a restart.
public enum SessionEvent: Sendable, Equatable {
    /// `didReceiveMessage`; answer with ``RelaySession/reply(to:with:)`` when `wantsReply`.
    case message(Delivery)
    /// `didReceiveApplicationContext`.
    case applicationContext(Delivery)
    /// `didReceiveUserInfo` (userInfo and complication transfers).
    case userInfo(Delivery)
    /// `didFinish userInfoTransfer`: the counterpart received this transfer.
    case userInfoTransferFinished(id: String)
    /// `sessionReachabilityDidChange`.
    case reachabilityChanged(Bool)
    /// The counterpart's app was uninstalled (false) or runs again (true), PROTOCOL.md §7.1:
    /// `sessionWatchStateDidChange` (phone), `sessionCompanionAppInstalledDidChange` (watch).
    case peerAppInstalledChanged(Bool)
    /// The device joined a pair (`paired`); `peerName` is the counterpart's device name.
    case paired(pairID: String, peerName: String)
    /// The pair ended (`unpaired`, or this device's token was revoked).
    case unpaired(reason: String)
    /// `activationDidComplete`: a session with the relay is established (after every reconnect).
    case activated(paired: Bool)
    /// The connection to the relay dropped; the session reconnects by itself.
    case disconnected
    /// Something failed that no call returns, e.g. saving the session state: the app must
    /// hear it (an unsaved item is not acked and comes again). ``RelaySessionError/replaced``
    /// ends the session's connection for good (it comes instead of ``disconnected``).
    case error(RelaySessionError)
}

/// One item delivered to this device.
public struct Delivery: Sendable, Hashable {
    /// The relay's seq (per pair and direction).
    public var seq: Int64
    public var mode: DeliveryMode
    /// The sender's send id (a reply refers to it).
    public var id: String
    public var from: Role
    public var sentAt: Timestamp
    public var payload: Payload
    /// `message` only: the sender waits for a reply.
    public var wantsReply: Bool

    /// The delivery a `deliver` frame carries.
    public init(_ d: Deliver) {
        seq = d.seq
        mode = d.mode
        id = d.id
        from = d.from
        sentAt = d.sentAt
        payload = d.payload
        wantsReply = d.wantsReply == true
    }
}

/// A pairing code shown on the phone.
public struct PairingCode: Sendable, Hashable {
    public var code: String
    public var expiresAt: Timestamp

    public init(code: String, expiresAt: Timestamp) {
        self.code = code
        self.expiresAt = expiresAt
    }
}

/// A durable transfer this device sent (WC's `WCSessionUserInfoTransfer`).
public struct UserInfoTransfer: Sendable, Hashable {
    /// The send id.
    public var id: String
    public var payload: Payload
    /// Whether it was sent as the current complication info.
    public var isCurrentComplicationInfo: Bool
    /// For a complication: whether it went as plain userInfo (budget spent).
    public var fellBackToUserInfo: Bool

    public init(id: String, payload: Payload, isCurrentComplicationInfo: Bool = false, fellBackToUserInfo: Bool = false) {
        self.id = id
        self.payload = payload
        self.isCurrentComplicationInfo = isCurrentComplicationInfo
        self.fellBackToUserInfo = fellBackToUserInfo
    }
}
