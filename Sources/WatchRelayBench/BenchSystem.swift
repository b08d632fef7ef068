import Foundation
import Primitives

/// What the benchmark reads from `/proc` and sets with `setrlimit`: CPU time, RSS, affinity,
/// the open-file limit, the machine description.
enum BenchSystem {
    /// Clock ticks per second of `/proc/<pid>/stat` times.
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// CPU seconds process `pid` has used (all its threads, user and system), or nil if it is gone.
    ///
    /// Read from the process's CPU-time clock (`clock_getcpuclockid`), which the kernel keeps in
    /// nanoseconds. `/proc/<pid>/stat` counts whole clock ticks (10 ms): at 64 KiB a two-second
    /// point gives the C relay ~0.23 s of CPU, so a tick either way moved its figure by 4 %, and
    /// the ratio of two such figures by up to 8 %. The tick count stays as the fallback.
    static func cpuSeconds(pid: Int32) -> Double? {
        var clock = clockid_t()
        var time = timespec()
        // The clock's ID encodes the pid shifted left by three bits: a pid above Linux's largest
        // (2^22) would wrap into another process's clock, this one's for Int32.max.
        if pid > 0, pid <= 1 << 22, clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 {
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        return tickSeconds(pid: pid)
    }

    /// User + system CPU seconds of `pid` in clock ticks: fields 14 and 15 of `/proc/<pid>/stat`,
    /// counted after the `)` that ends the command name (which may itself contain spaces).
    static func tickSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// CPU seconds every core spent busy since boot (user, nice, system, irq, softirq, steal
    /// from the first line of `/proc/stat`), for telling other processes' load apart.
    static func machineBusySeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return 0 }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 8 else { return 0 }
        // user nice system idle iowait irq softirq steal (guest time is already in user).
        return (values[0] + values[1] + values[2] + values[5] + values[6] + values[7]) / ticksPerSecond
    }

    /// `VmRSS` of process `pid` in KiB, or nil if it is gone.
    static func rssKiB(pid: Int32) -> Int? {
        statusField("VmRSS", pid: pid).flatMap { Int($0.split(separator: " ").first ?? "") }
    }

    /// The peak resident set of `pid` in KiB (`VmHWM`), nil if it is gone.
    static func peakRSSKiB(pid: Int32) -> Int? {
        statusField("VmHWM", pid: pid).flatMap { Int($0.split(separator: " ").first ?? "") }
    }

    /// The CPUs this process may run on, as `/proc/self/status` lists them (e.g. `1` or `0-1`).
    static func allowedCPUs() -> String {
        statusField("Cpus_allowed_list", pid: getpid()) ?? "?"
    }

    private static func statusField(_ name: String, pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// Raises the soft open-file limit to the hard limit; returns the new soft limit.
    ///
    /// Child processes inherit it, so the relay under test can hold as many sockets.
    @discardableResult
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Replaces this process with itself under `taskset -c cpu`, unless it already runs on
    /// exactly that CPU (or did this once already). Returns only if no re-exec happened.
    static func pinSelf(to cpu: Int) {
        let marker = "WATCHRELAY_BENCH_PINNED"
        guard allowedCPUs() != String(cpu), ProcessInfo.processInfo.environment[marker] == nil else { return }
        setenv(marker, "1", 1)
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let arguments = [BenchChild.tasksetPath, "-c", String(cpu), executable] + CommandLine.arguments.dropFirst()
        var cArguments = arguments.map { strdup($0) }
        cArguments.append(nil)
        // execv only returns on failure; the strdup copies then stay leaked (a handful of bytes).
        execv(BenchChild.tasksetPath, &cArguments)
        StandardError.write("bench: cannot re-exec under taskset; running unpinned\n")
    }

    /// The load averages from `/proc/loadavg` (1, 5, 15 minutes).
    static func loadAverage() -> [Double] {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// The machine, for the report: CPU model, core count, kernel, memory.
    static func machine() -> BenchMachine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown"
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let memory = statusLine("MemTotal", file: "/proc/meminfo").flatMap { Int($0.split(separator: " ").first ?? "") }
        return BenchMachine(
            cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount, kernel: kernel,
            memoryMiB: (memory ?? 0) / 1024, loadAverage: loadAverage())
    }

    private static func statusLine(_ name: String, file: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// The machine a benchmark ran on.
struct BenchMachine: Codable, Sendable {
    var cpuModel: String
    var cores: Int
    var kernel: String
    var memoryMiB: Int
    /// 1, 5 and 15 minute load averages when the run started.
    var loadAverage: [Double]
}

/// CPU seconds of the relay and of the generator (this process) between two instants.
struct BenchCPUSample {
    let wall: ContinuousClock.Instant
    let relay: Double
    let generator: Double
    /// Busy CPU seconds of the whole machine (every process, both cores).
    let machine: Double

    /// Samples now; `relayPID` is the process under test.
    init(relayPID: Int32) {
        wall = .now
        relay = BenchSystem.cpuSeconds(pid: relayPID) ?? 0
        generator = BenchSystem.cpuSeconds(pid: getpid()) ?? 0
        machine = BenchSystem.machineBusySeconds()
    }

    /// Seconds of wall time from `earlier` to this sample.
    func seconds(since earlier: BenchCPUSample) -> Double {
        let (s, attoseconds) = (wall - earlier.wall).components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
