import Foundation

/// Standard output, the one writer of every command's output (reports, help, `--machine`
/// lines), unbuffered: a line is out when the call returns, for scripts reading it, and lines
/// from different tasks never interleave (a pipe write over `PIPE_BUF` bytes is not atomic).
///
/// When the reader is gone (`watchrelay watch --machine | head -5`: EPIPE, as the process
/// ignores SIGPIPE), the process ends as a Unix tool does, by SIGPIPE and quietly. Any other
/// failure (a full disk behind `> file`) is said on standard error, and the process exits 1.
/// (`FileHandle.write(_:)` traps on both, with a backtrace; `print`'s buffer lost the text at
/// exit with status 0.)
public enum StandardOutput {
    private static let lock = LockedState<Void>(())

    /// A line that could not be written.
    public struct WriteError: Error, Sendable {
        /// The reader is gone (EPIPE).
        public let isBrokenPipe: Bool
        /// What the system said.
        public let description: String
    }

    /// Writes `line` and a newline; on failure, ends the process (``end(_:)``).
    public static func writeLine(_ line: String) {
        do {
            try write(line: line)
        } catch {
            end(error)
        }
    }

    /// Writes `line` and a newline, or says why it could not, for a caller with something to
    /// undo first (`serve`'s new database); then ``end(_:)``.
    public static func write(line: String) throws(WriteError) {
        let data = Data((line + "\n").utf8)
        let failure: WriteError? = lock.withLock { _ in
            do {
                try FileHandle.standardOutput.write(contentsOf: data)
                return nil
            } catch {
                // Foundation's error carries the errno as its underlying POSIX error.
                let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code
                return WriteError(isBrokenPipe: code == Int(EPIPE), description: error.localizedDescription)
            }
        }
        if let failure { throw failure }
    }

    /// Ends the process for `error`: by SIGPIPE, quietly, when the reader is gone; else with
    /// the reason on standard error and status 1.
    public static func end(_ error: WriteError) -> Never {
        if error.isBrokenPipe {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        let program = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "watchrelay"
        StandardError.write("\(program): cannot write to standard output: \(error.description)\n")
        exit(1)
    }
}
