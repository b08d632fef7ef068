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

    /// Writes `line` and a newline.
    public static func writeLine(_ line: String) {
        let data = Data((line + "\n").utf8)
        lock.withLock { _ in
            do {
                try FileHandle.standardOutput.write(contentsOf: data)
            } catch {
                // Foundation's error carries the errno as its underlying POSIX error.
                if ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(EPIPE) {
                    signal(SIGPIPE, SIG_DFL)
                    raise(SIGPIPE)
                }
                StandardError.write("\(CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "watchrelay"): cannot write to standard output: \(error.localizedDescription)\n")
                exit(1)
            }
        }
    }
}
