import Foundation
import PureSwiftKernels
import PureSwiftKernelsAVX2
import PureSwiftKernelsAVX512
import PureSwiftKernelsAVX512VNNI
import SanadCore

/// The builds of the engine's kernels in this binary (see PureSwiftKernels' KernelSet.swift) and the choice among
/// them: the fastest one the running CPU can execute, so that no machine meets an instruction it lacks.
public enum KernelBuilds {
    /// Every build, fastest first.
    public static let all: [any KernelSet] = [
        PureSwiftKernelsAVX512VNNI.BuiltKernels(), PureSwiftKernelsAVX512.BuiltKernels(),
        PureSwiftKernelsAVX2.BuiltKernels(), PureSwiftKernels.BuiltKernels(),
    ]

    /// The builds this CPU runs, fastest first (the portable one always).
    public static let runnable: [any KernelSet] = all.filter { CPUFeatures.current.runs(build: $0.name) }

    /// The build named `name` ("auto", nil or empty: the fastest runnable one). Throws when there is no such
    /// build or the CPU cannot run it, naming the ones it can.
    public static func select(_ name: String?) throws -> any KernelSet {
        guard let name, !name.isEmpty, name != "auto" else { return runnable[0] }
        guard let build = all.first(where: { $0.name == name }) else {
            throw SanadError.engine(
                "pure-swift: there is no kernel build '\(name)'; use auto, "
                    + all.map(\.name).joined(separator: ", "))
        }
        guard CPUFeatures.current.runs(build: name) else {
            throw SanadError.engine(
                "pure-swift: this CPU cannot run the \(name) kernels (it lacks "
                    + CPUFeatures.requirements(of: name).subtracting(CPUFeatures.current.flags).sorted()
                    .joined(separator: ", ") + "); it runs " + runnable.map(\.name).joined(separator: ", "))
        }
        return build
    }
}

/// The instruction-set extensions of the running CPU that the kernel builds need, as the OS reports them (so an
/// extension the OS has not enabled, such as AVX-512 state not saved by the kernel, counts as missing).
public struct CPUFeatures: Sendable {
    /// Lower-case names as Linux's /proc/cpuinfo spells them ("avx2", "fma", "avx512bw", …).
    public let flags: Set<String>

    public static let current = CPUFeatures(flags: readFlags())

    /// The extensions a build's `-target-cpu` lets the compiler use (Package.swift).
    public static func requirements(of build: String) -> Set<String> {
        let avx2: Set<String> = ["avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe", "popcnt"]  // abm: LZCNT
        let avx512: Set<String> = ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]
        switch build {
        case "avx2": return avx2
        case "avx512": return avx2.union(avx512)
        case "avx512vnni": return avx2.union(avx512).union(["avx512_vnni"])  // cascadelake: skylake-avx512 + VNNI
        default: return []
        }
    }

    /// Whether this CPU runs `build`. Off x86-64 only the portable build (the others are portable there too, but
    /// there is no point in picking them).
    public func runs(build: String) -> Bool {
        #if arch(x86_64)
            return Self.requirements(of: build).isSubset(of: flags)
        #else
            return build == "portable"
        #endif
    }

    private static func readFlags() -> Set<String> {
        #if os(Linux)
            guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") }),
                let colon = line.firstIndex(of: ":")
            else { return [] }
            return Set(line[line.index(after: colon)...].split(separator: " ").map { String($0) })
        #elseif os(macOS) && arch(x86_64)
            // hw.optional.<name> sysctls: 1 when the CPU has the extension and the OS enabled it.
            let names: [(String, String)] = [
                ("avx", "avx1_0"), ("avx2", "avx2_0"), ("fma", "fma"), ("f16c", "f16c"), ("bmi1", "bmi1"),
                ("bmi2", "bmi2"), ("abm", "lzcnt"), ("movbe", "movbe"), ("popcnt", "popcnt"), ("avx512f", "avx512f"),
                ("avx512cd", "avx512cd"), ("avx512bw", "avx512bw"), ("avx512dq", "avx512dq"),
                ("avx512vl", "avx512vl"), ("avx512_vnni", "avx512vnni"),
            ]
            var found: Set<String> = []
            for (flag, sysctl) in names {
                var value: Int32 = 0
                var size = MemoryLayout<Int32>.size
                if sysctlbyname("hw.optional." + sysctl, &value, &size, nil, 0) == 0, value != 0 { found.insert(flag) }
            }
            return found
        #else
            return []
        #endif
    }
}
