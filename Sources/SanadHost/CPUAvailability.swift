import Foundation

/// How much CPU this process can use right now: the cores it may run on (affinity), the cgroup's CPU quota, and
/// how busy those cores are (from `/proc/stat`, over a short window). The default thread count is what is left:
/// engines whose threads spin at barriers (libllama's) collapse when they are given cores other work is using.
public struct CPUAvailability: Sendable, Equatable {
    /// Cores in this process's affinity mask (all online cores when it cannot be read).
    public var allowedCores: Int
    /// The cgroup's `cpu.max` quota in cores (nil: no limit).
    public var quotaCores: Double?
    /// Cores' worth of time other work used during the sample (0 when not measured).
    public var busyCores: Double

    public init(allowedCores: Int, quotaCores: Double?, busyCores: Double) {
        self.allowedCores = max(1, allowedCores)
        self.quotaCores = quotaCores
        self.busyCores = max(0, busyCores)
    }

    /// Cores this process may use at most: the affinity mask, limited by the quota (rounded up).
    public var usableCores: Int {
        guard let quotaCores else { return allowedCores }
        return max(1, min(allowedCores, Int(quotaCores.rounded(.up))))
    }

    /// Threads for new work: the usable cores less those other work keeps busy (a core counts as taken when more
    /// than half of it is used), at least 1.
    public var idleCores: Int {
        max(1, min(usableCores, usableCores - Int(busyCores.rounded(.toNearestOrAwayFromZero))))
    }

    /// One line for `sanad config`: `2 of 2 cores idle (affinity 2, no CPU quota, 0.1 cores busy)`.
    public var description: String {
        let quota = quotaCores.map { String(format: "CPU quota %.2f cores", $0) } ?? "no CPU quota"
        return "\(idleCores) of \(usableCores) cores idle (affinity \(allowedCores), \(quota), "
            + String(format: "%.1f cores busy)", busyCores)
    }

    /// Measures now: affinity and quota at once, busy time over `window` seconds (0 skips the sample).
    public static func measure(window: Double = 0.1) -> CPUAvailability {
        Sample.start().finish(window: window)
    }

    /// A busy-time sample running since `start()`: the CPUs' busy ticks and this process's own CPU time then, so
    /// `finish` can count only other work's time. Started early (at launch), it overlaps the work a command does
    /// before it needs a thread count (reading configs, checking the model file) instead of delaying it.
    public struct Sample: Sendable {
        let cpus: Set<Int>?
        let ticks: (busy: UInt64, total: UInt64, cpuCount: Int)?
        let ownSeconds: Double
        let started: ContinuousClock.Instant

        /// Takes the first reading now.
        public static func start() -> Sample {
            let cpus = affinityCPUs()
            return Sample(
                cpus: cpus, ticks: busyAndTotalTicks(cpus: cpus), ownSeconds: processCPUSeconds(),
                started: .now)
        }

        /// The availability over the time since `start()`, waiting first until `window` seconds have passed (0 skips
        /// the busy sample). This process's own CPU time in between is not counted as other work (unless
        /// `excludingOwnTime` is false).
        public func finish(window: Double, excludingOwnTime: Bool = true) -> CPUAvailability {
            let allowed = cpus?.count ?? ProcessInfo.processInfo.activeProcessorCount
            guard window > 0, let before = ticks else {
                return CPUAvailability(allowedCores: allowed, quotaCores: cgroupQuotaCores(), busyCores: 0)
            }
            let elapsed = started.duration(to: .now)
            let remaining = window - Double(elapsed.components.seconds) - Double(elapsed.components.attoseconds) * 1e-18
            if remaining > 0 { usleep(useconds_t(remaining * 1_000_000)) }
            guard let after = busyAndTotalTicks(cpus: cpus), after.total > before.total else {
                return CPUAvailability(allowedCores: allowed, quotaCores: cgroupQuotaCores(), busyCores: 0)
            }
            let ownTicks =
                excludingOwnTime ? (processCPUSeconds() - ownSeconds) * Double(sysconf(Int32(_SC_CLK_TCK))) : 0
            let othersBusy = max(0, Double(after.busy - before.busy) - ownTicks)
            return CPUAvailability(
                allowedCores: allowed, quotaCores: cgroupQuotaCores(),
                busyCores: othersBusy / Double(after.total - before.total) * Double(cpus?.count ?? after.cpuCount))
        }
    }

    /// CPU time this process has used, all threads, in seconds.
    static func processCPUSeconds() -> Double {
        var t = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 else { return 0 }
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    /// The CPU numbers of this process's affinity mask (`Cpus_allowed_list` of `/proc/self/status`, such as
    /// `0-3,8`), nil when it cannot be read.
    static func affinityCPUs() -> Set<Int>? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        var cpus = Set<Int>()
        for part in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
            let bounds = part.split(separator: "-").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let first = bounds.first ?? nil, let last = bounds.last ?? nil, first <= last, last < 1 << 16 else {
                return nil
            }
            cpus.formUnion(first...last)
        }
        return cpus.isEmpty ? nil : cpus
    }

    /// Busy and total ticks summed over `cpus` (every CPU when nil) from `/proc/stat`; busy = user + nice + system
    /// + irq + softirq + steal.
    static func busyAndTotalTicks(cpus: Set<Int>?) -> (busy: UInt64, total: UInt64, cpuCount: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        var busy: UInt64 = 0
        var total: UInt64 = 0
        var count = 0
        for line in text.split(separator: "\n") where line.hasPrefix("cpu") && !line.hasPrefix("cpu ") {
            let fields = line.split(separator: " ")
            guard let n = Int(fields[0].dropFirst(3)), cpus?.contains(n) ?? true else { continue }
            let ticks = fields.dropFirst().prefix(8).map { UInt64($0) ?? 0 }
            guard ticks.count >= 8 else { continue }
            let idle = ticks[3] &+ ticks[4]
            let sum = ticks.reduce(0, &+)
            total &+= sum
            busy &+= sum &- idle
            count += 1
        }
        return count > 0 ? (busy, total, count) : nil
    }

    /// `cpu.max` of this process's cgroup (v2) in cores, nil without a limit or a cgroup v2 file.
    static func cgroupQuotaCores() -> Double? {
        guard
            let line = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8))?
                .split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        else { return nil }
        let path = "/sys/fs/cgroup" + line.dropFirst(3) + "/cpu.max"
        guard let fields = (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: " "),
            fields.count == 2, let quota = Double(fields[0]),
            let period = Double(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)), period > 0
        else { return nil }
        return quota / period
    }
}

extension CPUAvailability {
    /// The sample started when the process began needing one (`startLaunchSample()`, else at first use).
    private static let launchSample = Sample.start()

    /// Starts the busy-time sample behind `current` now, so that its window runs while the command reads its
    /// configs and model file. Called at launch by commands' entry point; cheap (two small /proc reads).
    public static func startLaunchSample() { _ = launchSample }

    /// Measured once, when a command first needs a default thread count: over the time since launch, at least
    /// `window` (the rest is waited for; a sample older than 2 s is taken again, fresh).
    public static let current: CPUAvailability = {
        let sample = launchSample.started.duration(to: .now) > .seconds(2) ? Sample.start() : launchSample
        return sample.finish(window: window)
    }()

    /// The default thread count's sample window: 50 ms, five ticks of `/proc/stat` per core, enough to tell a busy
    /// core (0.8–1.2 cores' worth) from an idle one. A command waits for the rest of it before loading a model
    /// (that part of the load needs the thread count), so it is on the path to the first token: at 0.1 s it was
    /// more than half of SmolLM2's whole start (0.175 s with it, 0.070 s with `-t 2`).
    public static let window = 0.05

    /// The thread count when neither the command line nor the config gives one: the idle cores now.
    public static var defaultThreads: Int { current.idleCores }
}
