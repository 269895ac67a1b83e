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
        let cpus = affinityCPUs()
        let before = window > 0 ? busyAndTotalTicks(cpus: cpus) : nil
        if let before {
            usleep(useconds_t(window * 1_000_000))
            if let after = busyAndTotalTicks(cpus: cpus), after.total > before.total {
                let busyFraction = Double(after.busy - before.busy) / Double(after.total - before.total)
                return CPUAvailability(
                    allowedCores: cpus?.count ?? ProcessInfo.processInfo.activeProcessorCount,
                    quotaCores: cgroupQuotaCores(), busyCores: busyFraction * Double(cpus?.count ?? after.cpuCount))
            }
        }
        return CPUAvailability(
            allowedCores: cpus?.count ?? ProcessInfo.processInfo.activeProcessorCount, quotaCores: cgroupQuotaCores(),
            busyCores: 0)
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
    /// Measured once, when a command first needs a default thread count.
    public static let current = CPUAvailability.measure()

    /// The thread count when neither the command line nor the config gives one: the idle cores now.
    public static var defaultThreads: Int { current.idleCores }
}
