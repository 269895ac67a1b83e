import Foundation
import SanadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How much memory this machine gives us: physical memory, limited by a cgroup (container) limit when one is set.
public struct SystemMemory: Sendable, Equatable {
    public var physicalBytes: Int
    /// The cgroup v2 `memory.max` or v1 `memory.limit_in_bytes`, when set.
    public var cgroupLimitBytes: Int?

    public init(physicalBytes: Int, cgroupLimitBytes: Int?) {
        self.physicalBytes = physicalBytes
        self.cgroupLimitBytes = cgroupLimitBytes
    }

    /// What a process may use: the smaller of the two.
    public var effectiveBytes: Int { min(physicalBytes, cgroupLimitBytes ?? Int.max) }

    /// Reads this machine.
    public static func current() -> SystemMemory {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        let physical = pages > 0 && pageSize > 0 ? pages * pageSize : 0
        return SystemMemory(physicalBytes: physical, cgroupLimitBytes: cgroupLimit())
    }

    /// Memory that can be had now without swapping: `MemAvailable` from `/proc/meminfo`, and within a cgroup limit
    /// at most the limit minus the cgroup's current use. Nil when neither can be read.
    public static func availableBytes(
        meminfo: String = "/proc/meminfo", cgroupRoot root: String = "/sys/fs/cgroup"
    ) -> Int? {
        var available: Int?
        if let text = try? String(contentsOfFile: meminfo, encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
                let fields = line.split(separator: " ")
                if fields.count >= 2, let kib = Int(fields[1]) { available = kib * 1024 }
            }
        }
        if let limit = cgroupLimit(root: root),
            let usedText = (try? String(contentsOfFile: "\(root)/memory.current", encoding: .utf8))
                ?? (try? String(contentsOfFile: "\(root)/memory/memory.usage_in_bytes", encoding: .utf8)),
            let used = Int(usedText.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            available = min(available ?? Int.max, max(0, limit - used))
        }
        return available
    }

    /// A description of the memory pressure when less than `minimumFreeMiB` is available
    /// (`MemAvailable 180 MiB < 256 MiB`), nil when there is enough or it cannot be read.
    public static func pressure(minimumFreeMiB: Int) -> String? {
        guard let bytes = availableBytes(), bytes < minimumFreeMiB << 20 else { return nil }
        return "\(bytes >> 20) MiB < \(minimumFreeMiB) MiB"
    }

    /// The cgroup memory limit in bytes, or nil when unlimited or not in a cgroup.
    public static func cgroupLimit(root: String = "/sys/fs/cgroup") -> Int? {
        for file in ["\(root)/memory.max", "\(root)/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            // "max" (v2) or a huge number near Int64.max (v1) mean unlimited.
            if let value = Int(trimmed), value > 0, value < 1 << 50 { return value }
            return nil
        }
        return nil
    }
}

/// Picks the tier config for a machine.
public enum TierSelection {
    /// The tier with the largest `minimumMemoryMiB` that the machine meets; when none fits, the smallest tier.
    /// Returns the choice and a sentence saying why.
    public static func choose(
        from configs: [HostConfiguration], memory: SystemMemory
    ) -> (config: HostConfiguration, reason: String)? {
        let sorted = configs.sorted { $0.minimumMemoryMiB < $1.minimumMemoryMiB }
        guard let smallest = sorted.first else { return nil }
        let mib = memory.effectiveBytes / 1_048_576
        let limit =
            memory.cgroupLimitBytes.map {
                "cgroup limit \($0 / 1_048_576) MiB, physical \(memory.physicalBytes / 1_048_576) MiB"
            }
            ?? "physical memory \(mib) MiB, no cgroup limit"
        if let best = sorted.last(where: { $0.minimumMemoryMiB <= mib }) {
            return (best, "\(mib) MiB usable (\(limit)) ≥ tier '\(best.tier)' minimum \(best.minimumMemoryMiB) MiB")
        }
        return (
            smallest,
            "\(mib) MiB usable (\(limit)) is below every tier's minimum; using the smallest, '\(smallest.tier)'"
        )
    }
}
