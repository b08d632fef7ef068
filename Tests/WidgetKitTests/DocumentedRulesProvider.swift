import Foundation
import Primitives
import WidgetKit

/// An entry of ``DocumentedRulesProvider``: which call made it, its place in that call's
/// timeline, and the app's stored value when the call ran.
struct RuleEntry: TimelineEntry, Sendable, Equatable {
    let date: Date
    let call: Int
    let index: Int
    let value: Int
}

/// What ``DocumentedRulesProvider`` answers to one `getTimeline` call: entries at offsets (in
/// seconds) from the date it reads when called, and a policy relative to that date too.
struct RuleReply: Sendable {
    enum Policy: Sendable {
        case atEnd
        case never
        /// `.after(now + seconds)`.
        case after(TimeInterval)
    }

    var offsets: [TimeInterval]
    var policy: Policy

    static func entries(_ offsets: TimeInterval..., policy: Policy) -> RuleReply {
        RuleReply(offsets: offsets, policy: policy)
    }
}

/// A small widget provider written for the documented-rules suite, independent of the other
/// fixtures: `script(call)` says what call `call` (0, 1, …) answers, `nil` for a call that
/// never calls its completion handler. It dates entries from `Date()` as a watchOS provider
/// does, or from `clock` once a test hands it the host's virtual clock.
final class DocumentedRulesProvider: TimelineProvider, Sendable {
    private let script: @Sendable (Int) -> RuleReply?
    private let snapshotAnswers: Bool
    /// The app's data, as a store shared with the app would hold it.
    let stored = LockedState(0)
    /// Every `getTimeline` context, in call order.
    let timelineContexts = LockedState<[TimelineProviderContext]>([])
    /// Every `getSnapshot` context, in call order.
    let snapshotContexts = LockedState<[TimelineProviderContext]>([])
    /// The clock to date entries from (`providerClock: .virtual`); `Date()` while `nil`.
    let clock = LockedState<VirtualClock?>(nil)
    /// For each call, the wall-clock gap the provider meant for its entries (set by `note`).
    let notes = LockedState<[Int: TimeInterval]>([:])
    private let note: (@Sendable (Date) -> TimeInterval)?

    /// A provider answering `script(call)`; `note`, given the call's `Date()`, returns an
    /// extra offset appended to the call's entries and remembered in ``notes``.
    init(
        snapshotAnswers: Bool = true, note: (@Sendable (Date) -> TimeInterval)? = nil,
        _ script: @escaping @Sendable (Int) -> RuleReply?
    ) {
        self.script = script
        self.snapshotAnswers = snapshotAnswers
        self.note = note
    }

    /// A provider that answers every call with `reply`.
    convenience init(always reply: RuleReply) {
        self.init { _ in reply }
    }

    func placeholder(in context: Context) -> RuleEntry {
        RuleEntry(date: Date(), call: -1, index: 0, value: 0)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (RuleEntry) -> Void) {
        snapshotContexts.withLock { $0.append(context) }
        guard snapshotAnswers else { return }
        completion(RuleEntry(date: Date(), call: -2, index: 0, value: stored.withLock { $0 }))
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<RuleEntry>) -> Void) {
        let call = timelineContexts.withLock { contexts in
            contexts.append(context)
            return contexts.count - 1
        }
        guard let reply = script(call) else { return }
        let now = clock.withLock { $0?.now } ?? Date()
        var offsets = reply.offsets
        if let note {
            let extra = note(now)
            notes.withLock { $0[call] = extra }
            offsets.append(extra)
        }
        let value = stored.withLock { $0 }
        let entries = offsets.enumerated().map { index, offset in
            RuleEntry(date: now.addingTimeInterval(offset), call: call, index: index, value: value)
        }
        let policy: TimelineReloadPolicy =
            switch reply.policy {
            case .atEnd: .atEnd
            case .never: .never
            case .after(let seconds): .after(now.addingTimeInterval(seconds))
            }
        completion(Timeline(entries: entries, policy: policy))
    }
}

extension WidgetDay where Entry == RuleEntry {
    /// The entries the widget in `family` showed, without its placeholder.
    func timelineEntries(_ family: WidgetFamily = .accessoryRectangular) -> [ShownEntry<RuleEntry>] {
        shown(family).filter { !$0.isPlaceholder }
    }
}

extension String {
    /// How many times `piece` occurs, not overlapping.
    func count(of piece: String) -> Int {
        components(separatedBy: piece).count - 1
    }
}
