import AppIntents
import Foundation

/// Any provider the host can run, as closures: the completion-handler form
/// (``TimelineProvider``) and the async, intent-configured form (``AppIntentTimelineProvider``)
/// behind one shape, each call limited to a real-time timeout. Not `Sendable`: the host
/// calls it from its own task only, so a completion-handler provider need not be `Sendable`.
struct TimelineSource<Entry: TimelineEntry & Sendable> {
    /// `placeholder(in:)`.
    let placeholder: (TimelineProviderContext) -> Entry
    /// The timeline for a context and the instance's configuration, or `nil` if the provider
    /// did not answer within the timeout; when (wall clock) it answered; and how many extra
    /// times it called the handler so far, read again later (a second call can come after the
    /// first answer was used).
    let timeline:
        (TimelineProviderContext, (any WidgetConfigurationIntent)?, TimeInterval) async -> (
            Timeline<Entry>?, answeredAt: Date?, extraCalls: @Sendable () -> Int
        )
    /// The provider's configuration recommendations (intent-configured providers).
    let recommendations: () -> [any WidgetConfigurationIntent]
    /// `getSnapshot(in:completion:)` / `snapshot(for:in:)`, as ``timeline``.
    let snapshot:
        (TimelineProviderContext, (any WidgetConfigurationIntent)?, TimeInterval) async -> (
            Entry?, extraCalls: @Sendable () -> Int
        )

    init<P: TimelineProvider>(_ provider: P) where P.Entry == Entry {
        placeholder = { provider.placeholder(in: $0) }
        snapshot = { context, _, timeout in
            let box = CompletionBox<Entry>()
            provider.getSnapshot(in: context) { box.complete($0) }
            let value = await box.value(timeout: timeout)
            return (value, { box.extraCalls })
        }
        timeline = { context, _, timeout in
            let box = CompletionBox<Timeline<Entry>>()
            provider.getTimeline(in: context) { box.complete($0) }
            let value = await box.value(timeout: timeout)
            return (value, box.answeredAt, { box.extraCalls })
        }
        recommendations = { [] }
    }

    init<P: AppIntentTimelineProvider & Sendable>(_ provider: P) where P.Entry == Entry {
        placeholder = { provider.placeholder(in: $0) }
        snapshot = { context, configuration, timeout in
            let box = CompletionBox<Entry>()
            let intent = configuration as? P.Intent ?? P.Intent()
            let task = Task { box.complete(await provider.snapshot(for: intent, in: context)) }
            let value = await box.value(timeout: timeout)
            if value == nil { task.cancel() }
            return (value, { 0 })
        }
        timeline = { context, configuration, timeout in
            let box = CompletionBox<Timeline<Entry>>()
            let intent = configuration as? P.Intent ?? P.Intent()
            let task = Task { box.complete(await provider.timeline(for: intent, in: context)) }
            let value = await box.value(timeout: timeout)
            if value == nil { task.cancel() }
            return (value, box.answeredAt, { 0 })
        }
        recommendations = { provider.recommendations().map(\.intent) }
    }
}

/// How the host reads the dates a provider returns.
public enum ProviderClock: Sendable, Hashable {
    /// The provider dates entries from `Date()` (as watchOS code does): the timeline arrives
    /// when the provider answers (calls its completion handler, or returns), at the reload's
    /// virtual now, and the host moves each date by the gap between that now and the wall
    /// clock at the answer, rounded to the second. So "now + 15 min" lands 15 virtual minutes
    /// after the reload, also when the provider read `Date()` after a slow fetch; a date read
    /// while the call ran (`Date()` itself, however slow the call) is the reload's now.
    case wallClock
    /// The provider dates entries from the host's ``VirtualClock`` (or from its data): the
    /// host takes dates as given.
    case virtual

    /// `date`, returned by a provider called at wall-clock `wall` that answered at wall-clock
    /// `answered`, during a reload at virtual `now`.
    func translate(_ date: Date, calledAt wall: Date, answeredAt answered: Date, now: Date) -> Date {
        switch self {
        case .virtual: return date
        case .wallClock:
            let offset = date.timeIntervalSince(answered)
            // Read during the call (a loaded machine can make that a second or more): now, so
            // an entry meant for now never waits for a second that is only the call's own time.
            if date >= wall && offset < 0.5 { return WidgetTime.add(now, 0) }
            // WidgetKit shows an entry at its date, and the timeline came with the answer: a
            // date is as far from the reload as it was from the answer, not from the call.
            return WidgetTime.add(now, offset.rounded())
        }
    }
}
