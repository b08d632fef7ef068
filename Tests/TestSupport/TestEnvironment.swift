import Foundation

// The knobs `make` passes to the test run through the environment.

/// How much longer every scaled wait of the tests may take: `WATCHRELAY_TIMEOUT_SCALE` (the
/// ThreadSanitizer run sets 8, which makes child processes and fixture parsing several times
/// slower), 1 when unset. Nothing is asserted about how long anything took.
public let timeoutScale = Double(ProcessInfo.processInfo.environment["WATCHRELAY_TIMEOUT_SCALE"] ?? "") ?? 1

/// The rounds of a fault test: `0..<defaultCount` in `make test`, `0..<WATCHRELAY_SOAK_ROUNDS`
/// when `make soak` sets it.
public func soakRounds(default defaultCount: Int) -> [Int] {
    Array(0..<(Int(ProcessInfo.processInfo.environment["WATCHRELAY_SOAK_ROUNDS"] ?? "") ?? defaultCount))
}
