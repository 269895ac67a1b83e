import Foundation
import SanadArchive
import SanadFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Proof that a native library computes on this CPU, before an engine that uses it is called available.
///
/// Loading a library and checking its symbols says nothing about its arithmetic: a llama.cpp built with
/// `-march=native` on a VM that lists AMX dies with SIGILL on its first matrix product, and a library that dies by
/// signal takes the whole process with it. So the library is first run in a child process: `sanad-probe KIND
/// LIBRARY` loads it and computes something small but real with it (for libllama, a forward pass of a tiny model it
/// writes itself), and reports back. A child that dies by a signal, hangs or fails makes the library unavailable
/// with what happened; the host then falls back to the next engine.
///
/// The verdict is cached per library file and CPU: the SHA-256 of the library and of every file it loaded from its
/// own folder (libggml-cpu.so holds llama.cpp's kernels, not libllama.so), the CPU model and its flags. A rebuilt
/// library, or the same disk on another CPU, is probed again. The cache lives in `SANAD_PROBE_CACHE`, else
/// `$XDG_CACHE_HOME/sanad/probes`, else `~/.cache/sanad/probes`; where it cannot be written, every process probes.
public enum NativeProbe {
    /// The environment variable naming the probe program; by default `sanad-probe` beside the running program.
    public static let programVariable = "SANAD_PROBE"
    /// The environment variable naming the cache folder.
    public static let cacheVariable = "SANAD_PROBE_CACHE"
    /// The environment variable giving the child's time limit in seconds (default 120).
    public static let timeoutVariable = "SANAD_PROBE_TIMEOUT"
    /// The probe program's file name.
    public static let programName = "sanad-probe"
    /// Bumped when what a probe checks changes, so older verdicts are not trusted.
    static let version = 1

    /// What a probe found.
    public struct Verdict: Sendable, Equatable {
        /// Whether the library computed.
        public var passed: Bool
        /// What the child did, or how it failed: `computed a 64-token prompt and 4 tokens`, `died with SIGILL …`.
        public var detail: String
        /// Whether this came from the cache rather than a child run now.
        public var cached: Bool

        public init(passed: Bool, detail: String, cached: Bool) {
            self.passed = passed
            self.detail = detail
            self.cached = cached
        }
    }

    private static let lock = NSLock()
    /// Verdicts already reached in this process, by kind and library path.
    nonisolated(unsafe) private static var known: [String: Verdict] = [:]

    /// The verdict for `library` (a file path) probed as `kind` (`llama`, `blas`): from this process's memory
    /// (unless `remember` is false), else the cache, else a child run now (`SANAD_PROBE_TIMEOUT` seconds at most).
    public static func verdict(
        kind: String, library: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        remember: Bool = true
    ) -> Verdict {
        lock.lock()
        defer { lock.unlock() }
        let path = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
        let key = "\(kind)|\(path)"
        if remember, let verdict = known[key] { return verdict }
        let cache = cacheFile(kind: kind, library: path, environment: environment)
        if let cache, let verdict = cachedVerdict(at: cache, library: path) {
            if remember { known[key] = verdict }
            return verdict
        }
        let (verdict, loaded) = runChild(kind: kind, library: path, environment: environment)
        if let cache, verdict.detail.isEmpty == false, !verdict.detail.hasPrefix(missingProgramPrefix) {
            store(verdict, kind: kind, library: path, loaded: loaded, at: cache)
        }
        if remember { known[key] = verdict }
        return verdict
    }

    /// The sentence a refusal starts with when the probe failed, for `library` as `displayName`.
    public static func refusal(displayName: String, library: String, verdict: Verdict) -> String {
        "\(library) loads but was not seen computing on this CPU: its probe (\(programName), a small real computation "
            + "in a child process) \(verdict.detail)"
    }

    // MARK: The child

    static let missingProgramPrefix = "could not run"

    /// The probe program: `SANAD_PROBE`, else `sanad-probe` beside the running program (or beside the test bundle).
    static func program(environment: [String: String]) -> String? {
        if let named = environment[programVariable], !named.isEmpty { return named }
        var folders: [String] = []
        #if os(Linux)
            if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                folders.append((exe as NSString).deletingLastPathComponent)
            }
        #endif
        if let first = CommandLine.arguments.first, first.contains("/") {
            folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent().path)
        }
        for folder in folders {
            let candidate = (folder as NSString).appendingPathComponent(programName)
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `sanad-probe kind library`; the verdict and the files the child reported loading.
    static func runChild(kind: String, library: String, environment: [String: String]) -> (Verdict, [String]) {
        guard let program = program(environment: environment) else {
            return (
                Verdict(
                    passed: false,
                    detail: "\(missingProgramPrefix): \(programName) is not beside this program; build it "
                        + "(swift build -c release builds it with sanad) or set \(programVariable) to its path",
                    cached: false), []
            )
        }
        let timeout = environment[timeoutVariable].flatMap(Double.init).map { max(1, $0) } ?? 120
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sanad-probe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            return (Verdict(passed: false, detail: "\(missingProgramPrefix): \(error)", cached: false), [])
        }
        let out = folder.appendingPathComponent("out")
        let err = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [kind, library, folder.path]
        var childEnvironment = environment
        childEnvironment["SWIFT_BACKTRACE"] = "enable=no"  // the child reports its own crash site, at once
        process.environment = childEnvironment
        process.standardInput = FileHandle.nullDevice
        guard let outHandle = try? FileHandle(forWritingTo: out), let errHandle = try? FileHandle(forWritingTo: err)
        else {
            return (Verdict(passed: false, detail: "\(missingProgramPrefix): no scratch files", cached: false), [])
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        let start = Date()
        do {
            try process.run()
        } catch {
            return (Verdict(passed: false, detail: "\(missingProgramPrefix) \(program): \(error)", cached: false), [])
        }
        var timedOut = false
        while process.isRunning {
            if Date().timeIntervalSince(start) > timeout {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(5_000)
        }
        process.waitUntilExit()
        try? outHandle.close()
        try? errHandle.close()
        let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        let lines = stdout.split(separator: "\n").map(String.init)
        let loaded = lines.filter { $0.hasPrefix("loaded ") }.map { String($0.dropFirst("loaded ".count)) }
        let milliseconds = Int((Date().timeIntervalSince(start) * 1000).rounded())
        if timedOut {
            return (
                Verdict(
                    passed: false, detail: "hung: no result in \(Int(timeout)) s (\(timeoutVariable))", cached: false),
                loaded
            )
        }
        let crashSite = stderr.split(separator: "\n").last { $0.hasPrefix("probe: fatal signal") }
            .map { String($0.dropFirst("probe: fatal signal ".count)) }
        if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            var detail = "died with \(signalName(signal))"
            if let crashSite, let site = crashSite.range(of: " at ") {
                detail += " in " + crashSite[site.upperBound...]
            }
            return (Verdict(passed: false, detail: detail, cached: false), loaded)
        }
        if process.terminationStatus == 0, let ok = lines.last(where: { $0.hasPrefix("ok ") }) {
            return (
                Verdict(passed: true, detail: String(ok.dropFirst(3)) + " in \(milliseconds) ms", cached: false), loaded
            )
        }
        let said = stderr.split(separator: "\n").filter { !$0.isEmpty }.suffix(2).joined(separator: " / ")
        return (
            Verdict(
                passed: false,
                detail: "failed (exit status \(process.terminationStatus)): \(said.isEmpty ? "no message" : said)",
                cached: false), loaded
        )
    }

    /// `SIGILL (illegal instruction, signal 4)` for 4.
    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: (String, String)] = [
            SIGILL: ("SIGILL", "illegal instruction"), SIGSEGV: ("SIGSEGV", "invalid memory access"),
            SIGBUS: ("SIGBUS", "bus error"), SIGFPE: ("SIGFPE", "arithmetic exception"),
            SIGABRT: ("SIGABRT", "abort"), SIGKILL: ("SIGKILL", "killed"), SIGTRAP: ("SIGTRAP", "trap"),
        ]
        guard let (name, meaning) = names[signal] else { return "signal \(signal)" }
        return "\(name) (\(meaning), signal \(signal))"
    }

    // MARK: The cache

    /// `model name` and a digest of the `flags` line of /proc/cpuinfo (a VM may hide flags its model has).
    static let cpuIdentity: String = {
        guard let text = readProcFile("/proc/cpuinfo") else {
            #if arch(x86_64)
                return "x86_64"
            #else
                return "arm64"
            #endif
        }
        func field(_ name: String) -> String {
            for line in text.split(separator: "\n") where line.hasPrefix(name) {
                if let colon = line.firstIndex(of: ":") {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return ""
        }
        let model = field("model name").isEmpty ? field("CPU part") : field("model name")
        let flags = field("flags").isEmpty ? field("Features") : field("flags")
        return "\(model) flags:\(sha256Hex(Array(flags.utf8)).prefix(16))"
    }()

    /// Where the verdict for `library` (as given; symbolic links are resolved) is cached, or nil without a cache.
    public static func cacheFile(kind: String, library: String, environment: [String: String]) -> URL? {
        let library = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
        let folder: URL
        if let named = environment[cacheVariable], !named.isEmpty {
            folder = URL(fileURLWithPath: named)
        } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            folder = URL(fileURLWithPath: xdg).appendingPathComponent("sanad/probes")
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            folder = URL(fileURLWithPath: home).appendingPathComponent(".cache/sanad/probes")
        } else {
            return nil
        }
        let name = "\(kind)-\(sha256Hex(Array(library.utf8)).prefix(24)).txt"
        return folder.appendingPathComponent(name)
    }

    /// SHA-256 of a file's bytes, or nil when it cannot be read (at most 1 GiB).
    static func fileDigest(_ path: String) -> String? {
        guard let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size < 1 << 30,
            RegularFile.problem(path: path) == nil, let data = FileManager.default.contents(atPath: path)
        else { return nil }
        return sha256Hex(Array(data))
    }

    /// A cached verdict whose every recorded file still has its digest, on this CPU, from this probe version.
    static func cachedVerdict(at file: URL, library: String) -> Verdict? {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        var files: [(digest: String, path: String)] = []
        for line in text.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = String(line[..<space])
            let value = String(line[line.index(after: space)...])
            if key == "file", let gap = value.firstIndex(of: " ") {
                files.append((String(value[..<gap]), String(value[value.index(after: gap)...])))
            } else {
                fields[key] = value
            }
        }
        guard fields["version"] == String(version), fields["cpu"] == cpuIdentity, fields["library"] == library,
            files.contains(where: { $0.path == library }), let verdict = fields["verdict"],
            let detail = fields["detail"]
        else { return nil }
        for f in files where fileDigest(f.path) != f.digest { return nil }
        return Verdict(passed: verdict == "passed", detail: detail, cached: true)
    }

    /// Records `verdict` with the digests of the library and of the files it loaded from its own folder.
    static func store(_ verdict: Verdict, kind: String, library: String, loaded: [String], at file: URL) {
        let folder = (library as NSString).deletingLastPathComponent
        var paths = [library]
        for path in loaded where (path as NSString).deletingLastPathComponent == folder && !paths.contains(path) {
            paths.append(path)
        }
        var lines = [
            "version \(version)", "kind \(kind)", "library \(library)", "cpu \(cpuIdentity)",
            "verdict \(verdict.passed ? "passed" : "failed")",
            "detail \(verdict.detail.replacingOccurrences(of: "\n", with: " "))",
        ]
        for path in paths {
            guard let digest = fileDigest(path) else { return }
            lines.append("file \(digest) \(path)")
        }
        let directory = file.deletingLastPathComponent()
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil
        else { return }
        let scratch = directory.appendingPathComponent(".\(file.lastPathComponent).\(getpid())")
        guard (try? Data((lines.joined(separator: "\n") + "\n").utf8).write(to: scratch)) != nil else { return }
        if rename(scratch.path, file.path) != 0 { try? FileManager.default.removeItem(at: scratch) }
    }
}
