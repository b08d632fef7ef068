import RelayCore

/// Holds frames to a connection for the `delay` and `slow-writes` faults, keeping each
/// connection's order: once one frame waits, every later frame (and a close) waits behind it.
///
/// A value-type state machine: ``submit(_:to:delay:spacing:now:)`` says whether an item goes
/// now; ``release(now:)`` hands back those whose time came. Items of a connection that closed
/// are forgotten (``forget(_:)``): the store still holds its durable items, redelivered later.
/// What each connection holds is counted (``heldBytes(to:)``), so the engine can close one that
/// holds too much as the transport closes a slow consumer.
public struct DeliveryGate<Item: Sendable>: Sendable {
    private struct Held: Sendable {
        var due: Int64
        var item: Item
        var bytes: Int
    }

    private var held: [LinkID: [Held]] = [:]
    /// The bytes of the items held, per connection.
    private var bytesHeld: [LinkID: Int] = [:]
    /// When the last item went out (or is due), per connection with write spacing.
    private var lastDue: [LinkID: Int64] = [:]

    public init() {}

    /// Whether nothing is held.
    public var isEmpty: Bool { held.isEmpty }

    /// When the first held item is due (nil when nothing is held).
    public var nextDue: Int64? {
        held.values.compactMap { $0.first?.due }.min()
    }

    /// Items held now, over all connections.
    public var heldCount: Int { held.values.reduce(0) { $0 + $1.count } }

    /// The bytes of the items held for `link` (what `submit` was told each weighs).
    public func heldBytes(to link: LinkID) -> Int { bytesHeld[link] ?? 0 }

    /// Returns `item` if it may go now; else holds it (for `delay` ms, at least `spacing` ms
    /// after the previous item to `link`, and never ahead of an item held before it), counting
    /// `bytes` towards ``heldBytes(to:)``.
    public mutating func submit(
        _ item: Item, bytes: Int = 0, to link: LinkID, delay: Int, spacing: Int, now: Int64
    ) -> Item? {
        var due = now + Int64(max(0, delay))
        if spacing > 0, let last = lastDue[link] { due = max(due, last + Int64(spacing)) }
        if let queue = held[link], let tail = queue.last { due = max(due, tail.due) }
        if spacing > 0 { lastDue[link] = due } else { lastDue[link] = nil }
        if due <= now && held[link] == nil { return item }
        held[link, default: []].append(Held(due: due, item: item, bytes: bytes))
        bytesHeld[link, default: 0] += bytes
        return nil
    }

    /// Items whose time came, in each connection's order.
    public mutating func release(now: Int64) -> [(LinkID, Item)] {
        var out: [(LinkID, Item)] = []
        for link in held.keys.sorted() {
            guard var queue = held[link] else { continue }
            var n = 0
            var bytes = 0
            while n < queue.count, queue[n].due <= now {
                out.append((link, queue[n].item))
                bytes += queue[n].bytes
                n += 1
            }
            queue.removeFirst(n)
            held[link] = queue.isEmpty ? nil : queue
            bytesHeld[link] = queue.isEmpty ? nil : bytesHeld[link, default: 0] - bytes
        }
        return out
    }

    /// Drops what was held for a connection that is gone.
    public mutating func forget(_ link: LinkID) {
        held[link] = nil
        bytesHeld[link] = nil
        lastDue[link] = nil
    }
}
