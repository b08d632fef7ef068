/// The ranges `watchrelay watch` enforces on the numbers a scenario gives it, defined once: the
/// command's option and `--machine` command parsers check them, and the scenario loader refuses
/// a value outside them when the file loads, so a scenario that the child process would refuse
/// (`--processes`) does not pass in this process or with `--memory` instead.
public enum WatchMachineLimits {
    /// `advance SECONDS` (a scenario's `advance` `seconds`): the manual widget clock moves
    /// forward, at most a leap year at a time.
    public static let advanceSeconds: ClosedRange<Double> = 0...(366 * 86_400)
    /// `watch --budget N` (a scenario's `start` `budget`): the daily reloads of every widget.
    public static let budget: ClosedRange<Int> = 0...100_000
}
