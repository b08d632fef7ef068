import Foundation
import Primitives

#if canImport(Glibc)
    import Glibc

    /// An app of yours running as a process of its own on a ``WatchRelayTestLink`` (WatchRelay
    /// addition, Linux only): what ``WatchRelayTestLink/launch(_:executable:arguments:foreground:complicationEnabled:environment:)``
    /// starts, for an app that reads `WCSession.default`.
    ///
    /// Not Foundation's `Process`: a `Process` started from a test's task inherits the blocked
    /// signals of the cooperative-pool thread that ran it, so the app never sees SIGTERM or SIGINT
    /// (`process.terminate()` does nothing and `waitUntilExit()` never returns), and in Swift
    /// 6.3.1 its `run()` can crash a test process that holds many descriptors. This one starts the
    /// app with an empty signal mask and none of the test's descriptors, its standard output and
    /// standard error in files of the link's directory, its standard input a pipe the test writes
    /// lines to (``write(line:)``, as a user would type them).
    public final class WatchRelayAppProcess: Sendable {
        /// The side the app plays.
        public let device: WatchRelayTestLink.Device
        /// The file its standard output goes to (``output`` reads it).
        public let outputPath: String
        /// The file its standard error goes to (``errorOutput`` reads it).
        public let errorPath: String
        private let process: PosixProcess
        /// The writing end of the app's standard input, until ``closeInput()``.
        private let input: LockedState<FileHandle?>

        init(
            device: WatchRelayTestLink.Device, process: PosixProcess, input: FileHandle, outputPath: String,
            errorPath: String
        ) {
            self.device = device
            self.process = process
            self.input = LockedState(input)
            self.outputPath = outputPath
            self.errorPath = errorPath
        }

        /// The app's process ID.
        public var processIdentifier: Int32 { process.processIdentifier }

        /// Whether it still runs (it was not reaped yet).
        public var isRunning: Bool { process.isRunning }

        /// Its exit status, or the signal that ended it (as Foundation's `Process`); 0 while it runs.
        public var terminationStatus: Int32 { process.terminationStatus }

        /// `.uncaughtSignal` when a signal ended it.
        public var terminationReason: Process.TerminationReason { process.terminationReason }

        /// What it printed on standard output so far. Swift's `print` to a file is block-buffered:
        /// an app that should be read while it runs writes with `FileHandle.standardOutput.write`
        /// (README, "Test your own app").
        public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        /// What it printed on standard error so far (unbuffered: the session's own messages too).
        public var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

        /// Returns once ``output`` contains `text`; throws ``WatchRelayTestLinkError/timedOut(_:)``
        /// after `seconds`, or at once when the app ended without printing it (its standard error
        /// in the message).
        public func waitForOutput(_ text: String, within seconds: Double = 10) async throws {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while true {
                if output.contains(text) { return }
                if !isRunning {
                    if output.contains(text) { return }
                    throw WatchRelayTestLinkError.timedOut(
                        "\"\(text)\" in the \(device) app's output: it ended (status \(terminationStatus)) without it; "
                            + "standard error: \(errorOutput.suffix(2000))")
                }
                guard ContinuousClock.now < deadline else { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            if output.contains(text) { return }
            throw WatchRelayTestLinkError.timedOut("\"\(text)\" in the \(device) app's output: not within \(seconds) s")
        }

        /// Writes `line` and a newline to the app's standard input (its `readLine()` returns it);
        /// false when the input was closed or the app no longer reads it.
        @discardableResult
        public func write(line: String) -> Bool {
            input.withLock { handle in
                guard let handle else { return false }
                return (try? handle.write(contentsOf: Data((line + "\n").utf8))) != nil
            }
        }

        /// Closes the app's standard input: its `readLine()` returns nil (end of file).
        public func closeInput() {
            let handle = input.withLock { handle in
                defer { handle = nil }
                return handle
            }
            try? handle?.close()
        }

        /// Returns once the app ended and was reaped (it blocks no thread of the cooperative pool).
        public func ended() async { await process.ended() }

        /// Sends SIGTERM (the app is quit) and returns once it ended; throws
        /// ``WatchRelayTestLinkError/timedOut(_:)`` if it still runs after `seconds` (then SIGKILL
        /// it with ``kill()``).
        public func terminate(within seconds: Double = 10) async throws {
            process.terminate()
            defer { if !isRunning { closeInput() } }
            try await waitForEnd("the \(device) app to end after SIGTERM", within: seconds)
        }

        /// Sends SIGKILL (the app killed, as `kill -9` or the system does) and returns once it ended.
        public func kill() async {
            let pid = process.processIdentifier
            if pid != 0 && process.isRunning { Glibc.kill(pid, SIGKILL) }
            await process.ended()
            closeInput()
        }

        private func waitForEnd(_ what: String, within seconds: Double) async throws {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while isRunning {
                guard ContinuousClock.now < deadline else {
                    throw WatchRelayTestLinkError.timedOut("\(what): not within \(seconds) s")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    extension WatchRelayTestLink {
        /// Starts `executable`, an app that reads `WCSession.default`, as `device` on this link:
        /// its environment is this process's, then ``environment(_:foreground:complicationEnabled:)``,
        /// then `environment`. Stop it with ``WatchRelayAppProcess/terminate(within:)`` or
        /// ``WatchRelayAppProcess/kill()``; ``stop()`` kills it if it still runs. Making sessions of the same device in
        /// the test while it runs is a second app process on that device: the relay keeps the later.
        ///
        /// - Parameter executable: a path; ``builtProduct(_:)`` finds one the tests' build made.
        /// - Throws: when it cannot be started (a missing file: an `NSError` naming it).
        public func launch(
            _ device: Device, executable: String, arguments: [String] = [], foreground: Bool = true,
            complicationEnabled: Bool = true, environment extra: [String: String] = [:]
        ) throws -> WatchRelayAppProcess {
            let name = device.rawValue + "-app-" + UUID().uuidString.prefix(8)
            let outputPath = directory + "/" + name + ".out"
            let errorPath = directory + "/" + name + ".err"
            guard FileManager.default.createFile(atPath: outputPath, contents: nil),
                FileManager.default.createFile(atPath: errorPath, contents: nil),
                let output = FileHandle(forWritingAtPath: outputPath), let error = FileHandle(forWritingAtPath: errorPath)
            else {
                throw WatchRelayTestLinkError.launchFailed("cannot create \(outputPath) for the app's output")
            }
            defer {
                try? output.close()
                try? error.close()
            }
            let process = PosixProcess()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment
                .merging(environment(device, foreground: foreground, complicationEnabled: complicationEnabled)) { $1 }
                .merging(extra) { $1 }
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = error
            try process.run()
            let app = WatchRelayAppProcess(
                device: device, process: process, input: input.fileHandleForWriting, outputPath: outputPath,
                errorPath: errorPath)
            started(app)
            return app
        }

        /// The path of the executable product `name` built with the tests (`swift build
        /// --build-tests` puts it next to the test bundle; name its target in the test target's
        /// dependencies so that it is built).
        public static func builtProduct(_ name: String) -> String {
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
            // The bundle may be `…/debug/MyPackageTests.xctest` (a file) on Linux.
            if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
            return directory.appendingPathComponent(name).path
        }
    }
#endif
