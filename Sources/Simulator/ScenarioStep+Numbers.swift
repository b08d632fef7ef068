import PhoneApp
import RelayConsole
import RelayCore
import RelayProtocol
import WatchApp

/// The numbers of a step, checked when the file loads: a value the step's actor would refuse
/// when it runs (the watch's `advance` and `--budget`, the phone's `move`, the relay's
/// `--context-bytes` and its console's link-fault parameters) or that would make the step check
/// nothing (`wait` for 0 events), or one no run can meet (a negative count), is the file's
/// mistake, said before anything runs. The ranges are the actors' own (``WatchMachineLimits``,
/// `PhoneConsoleCommand`, `serve`'s frame cap `Limits.defaultMaxFrameBytes`, `FaultPlan`),
/// so the same scenario is refused alike in every mode instead of failing only with
/// `--processes` or on sockets.
extension ScenarioStep {
    /// Seconds of real time a step waits (`sleep`'s `seconds`, `pair`'s `delay`, a `timeout`):
    /// at most an hour (more would not fit the milliseconds the runner sleeps for).
    static let realTimeSeconds: ClosedRange<Double> = 0...3600
    /// `expectGitHub`'s `status`: an HTTP status.
    static let httpStatuses: ClosedRange<Int> = 100...599
    /// The relay's `contextBytes`: what `serve --context-bytes` takes at the default
    /// `--max-frame-bytes`, the one a scenario's relay runs with in every mode.
    static let relayContextBytes: ClosedRange<Int> = 1...Limits.defaultMaxFrameBytes

    /// What is wrong with this step's numbers, or nil.
    func numberProblem(_ action: ScenarioAction) -> String? {
        func text(_ value: Double) -> String {
            value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        }
        func within(_ field: String, _ value: Double?, _ allowed: ClosedRange<Double>, _ what: String) -> String? {
            guard let value, !allowed.contains(value) else { return nil }
            return "'\(field)' must be in \(text(allowed.lowerBound))...\(text(allowed.upperBound)) (\(what)), not \(text(value))"
        }
        func within(_ field: String, _ value: Int?, _ allowed: ClosedRange<Int>, _ what: String) -> String? {
            guard let value, !allowed.contains(value) else { return nil }
            return "'\(field)' must be in \(allowed.lowerBound)...\(allowed.upperBound) (\(what)), not \(value)"
        }
        func atLeast(_ field: String, _ value: (some BinaryInteger)?, _ least: Int, _ what: String) -> String? {
            guard let value, value < least else { return nil }
            return "'\(field)' must be \(least) or more (\(what)), not \(value)"
        }
        let seconds: String? =
            action == .advance
            ? within("seconds", self.seconds, WatchMachineLimits.advanceSeconds, "the watch's advance")
            : within("seconds", self.seconds, Self.realTimeSeconds, "seconds of real time")
        let count: String? =
            action == .wait
            ? atLeast("count", self.count, 1, "a wait for no event checks nothing")
            : atLeast("count", self.count, 0, "a count")
        // In the order of the fields; the first problem is the one said.
        let problems: [String?] = [
            within("budget", budget, WatchMachineLimits.budget, "the watch's --budget"),
            within("reposMaxAge", reposMaxAge, PhoneConfiguration.reposMaxAgeSeconds, "the phone's --repos-max-age"),
            within("contextBytes", contextBytes, Self.relayContextBytes, "the relay's --context-bytes"),
            moveIndexProblem,
            seconds,
            within("delay", delay, Self.realTimeSeconds, "seconds of real time"),
            within("timeout", timeout, Self.realTimeSeconds, "seconds of real time"),
            count,
            atLeast("revision", revision, 1, "revisions start at 1"),
            atLeast("omitted", omitted, 0, "a count"),
            atLeast("pairs", pairs, 0, "a count"),
            atLeast("queued", queued, 0, "a count"),
            atLeast("connections", connections, 0, "a count"),
            within("status", status, Self.httpStatuses, "an HTTP status"),
            action == .linkFault ? linkFaultProblem : nil,
        ]
        return problems.lazy.compactMap { $0 }.first
    }

    /// An index the phone's `move` command refuses (its own parser says).
    private var moveIndexProblem: String? {
        guard let index, case .failure = PhoneConsoleCommand.parse(["move", login ?? "login", String(index)]) else {
            return nil
        }
        return "'index' must be 0 or more (0 is first; the phone's move), not \(index)"
    }

    /// A link fault's parameter the relay's console refuses (`ms`, `p`, `left`), checked by the
    /// console's own fault plan.
    private var linkFaultProblem: String? {
        guard let name = fault, let kind = FaultKind(rawValue: name) else { return nil }  // `none`, or unknown: said elsewhere
        if kind == .complicationBudget && target != "pair" {
            return "complication-budget is per pair: give \"target\": \"pair\""
        }
        let on: FaultTarget = target == "pair" ? .pair(PairID("scenario")) : .device(DeviceID("scenario"))
        var plan = FaultPlan(seed: 1)
        do {
            try plan.set(
                Fault(kind, on: on, milliseconds: ms, probability: p, left: left, at: Timestamp(millisecondsSinceEpoch: 0)))
        } catch {
            return "\(error.description) (the relay's console refuses it)"
        }
        return nil
    }
}
