import Primitives

/// The tests' child process: ``PosixProcess`` (in Primitives, so that `WatchRelayTesting` starts
/// apps' processes with it too).
public typealias TestProcess = PosixProcess
