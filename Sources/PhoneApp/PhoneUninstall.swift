/// What ``PhoneCompanion/uninstall()`` told the relay: the iPhone app goes for every watch of
/// the phone (PROTOCOL.md §6.5, §7.1), and each watch's pair is told on its own.
public struct PhoneUninstall: Sendable, Equatable {
    /// The ids of the watches whose pair the relay was not told of (`default`: the watch paired
    /// without a watch id), the active one first: each still sees the iPhone app installed.
    public var watchesNotTold: [String]

    /// Whether the relay was told for every watch of the phone.
    public var relayTold: Bool { watchesNotTold.isEmpty }

    /// An answer naming the watches not told.
    public init(watchesNotTold: [String]) { self.watchesNotTold = watchesNotTold }
}
