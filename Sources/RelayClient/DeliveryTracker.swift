/// Decides which `deliver` frames are new and what this device may ack.
///
/// A device keeps as its `lastSeq` the highest seq it processed, messages included — but
/// only up to the first durable item the app has not finished handling, so a crash never
/// acks an item the app did not handle. ``SessionCore`` asks for an ack only when a durable
/// item finishes (messages are never acked), so the seqs of messages reach the relay and the
/// store with the next durable ack. Pure value type: no I/O.
struct DeliveryTracker: Sendable, Equatable {
    /// The highest seq acked to the relay (and persisted).
    private(set) var ackedThrough: Int64
    /// The highest seq received and handed to the app.
    private(set) var highestReceived: Int64
    /// The highest seq of a durable item received (a message's is never acked on its own).
    private(set) var highestDurableReceived: Int64
    /// Durable seqs handed to the app and not yet acknowledged by it, ascending.
    private(set) var handling: [Int64] = []

    init(lastSeq: Int64) {
        ackedThrough = lastSeq
        highestReceived = lastSeq
        highestDurableReceived = lastSeq
    }

    /// Whether a delivery with `seq` is new (a redelivery of a processed one is not).
    func isNew(_ seq: Int64) -> Bool { seq > highestReceived }

    /// Records a delivery handed to the app; durable ones wait for ``finish(_:)``.
    mutating func received(_ seq: Int64, durable: Bool) {
        guard seq > highestReceived else { return }
        highestReceived = seq
        if durable {
            handling.append(seq)
            highestDurableReceived = seq
        }
    }

    /// Whether durable `seq` was handed to the app and not yet finished.
    func isHandling(_ seq: Int64) -> Bool { handling.contains(seq) }

    /// The app finished handling durable `seq`.
    mutating func finish(_ seq: Int64) {
        handling.removeAll { $0 == seq }
    }

    /// The cumulative ack to send now, if it moved: everything below the first unfinished
    /// durable item.
    mutating func ackToSend() -> Int64? {
        let through = handling.first.map { $0 - 1 } ?? highestReceived
        guard through > ackedThrough else { return nil }
        ackedThrough = through
        return through
    }

    /// A new pair: seqs restart at 1.
    mutating func reset() {
        self = DeliveryTracker(lastSeq: 0)
    }
}
