import Foundation
import GGUF

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The C functions the engine calls, declared here from the CBLAS, OpenBLAS and BLIS documentation (no header is
// copied). CBLAS enums are C `int`s; `blasint` is a 32-bit `int` in the LP64 builds this engine accepts (a 64-bit
// integer build is refused, see `BLASLibrary.integerWidthProblem`).

/// `void cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)`.
typealias FnSgemm =
    @convention(c) (
        Int32, Int32, Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32, UnsafePointer<Float>?, Int32,
        Float, UnsafeMutablePointer<Float>?, Int32
    ) -> Void
/// `void cblas_sgemv(order, trans, M, N, alpha, A, lda, X, incX, beta, Y, incY)`.
typealias FnSgemv =
    @convention(c) (
        Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32, UnsafePointer<Float>?, Int32, Float,
        UnsafeMutablePointer<Float>?, Int32
    ) -> Void
/// `void openblas_set_num_threads(int)`.
typealias FnSetThreadsInt = @convention(c) (Int32) -> Void
/// `void bli_thread_set_num_threads(dim_t)` (`dim_t` is 64 bits wide).
typealias FnSetThreadsDim = @convention(c) (Int64) -> Void
/// `char *openblas_get_config(void)`, `char *openblas_get_corename(void)`.
typealias FnString = @convention(c) () -> UnsafePointer<CChar>?
/// `gint_t bli_info_get_blas_int_type_size(void)`.
typealias FnIntegerSize = @convention(c) () -> Int64

/// CBLAS enum values (`CBLAS_ORDER`, `CBLAS_TRANSPOSE`).
enum CBLAS {
    static let rowMajor: Int32 = 101
    static let noTranspose: Int32 = 111
    static let transpose: Int32 = 112
}

/// Where to look for a CBLAS library, in order. As for libllama, the first source that names a file decides: a
/// path given in the config or in `SANAD_BLAS` is used alone (a person pointed at that file on purpose). With
/// neither, the system loader is asked for OpenBLAS, then BLIS, then a generic CBLAS.
public enum BLASLibraryLocator {
    /// The environment variable that names the library file.
    public static let environmentVariable = "SANAD_BLAS"
    /// The names handed to the system loader, in order of preference.
    public static let systemNames = ["libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libcblas.so.3"]
    /// The Debian package that provides the preferred library.
    public static let installHint =
        "apt-get install libopenblas0-pthread (scripts/setup installs it), or point SANAD_BLAS or the engine "
        + "option \"library\" at a CBLAS library such as BLIS's libblis.so.4"

    /// One place to try, with where it came from (for messages).
    public struct Candidate: Sendable, Equatable {
        /// A path, or a bare file name for the loader's search.
        public var path: String
        /// `config option "library"`, `SANAD_BLAS`, `system loader path`.
        public var source: String
        /// Whether `path` is a bare name the system loader searches for.
        public var isSystemSearch: Bool { !path.contains("/") }
    }

    /// The candidates for `option` (the config's `library` / the backend's init parameter) and `environment`.
    public static func candidates(option: String?, environment: [String: String]) -> [Candidate] {
        if let option, !option.isEmpty { return [Candidate(path: option, source: "config option \"library\"")] }
        if let env = environment[environmentVariable], !env.isEmpty {
            return [Candidate(path: env, source: environmentVariable)]
        }
        return systemNames.map { Candidate(path: $0, source: "system loader path") }
    }
}

/// A loaded CBLAS library with the functions the engine calls. Loaded once per path and never unloaded (OpenBLAS
/// keeps a process-wide thread pool).
final class BLASLibrary: @unchecked Sendable {
    /// Which implementation, for messages and for the thread setter's signature.
    enum Kind: String, Sendable {
        case openBLAS = "OpenBLAS"
        case blis = "BLIS"
        case generic = "CBLAS"
    }

    /// The file that was loaded (found in /proc/self/maps when the system loader searched for it).
    let path: String
    let kind: Kind
    /// `openblas_get_config()` (with `openblas_get_corename()`) for OpenBLAS; empty otherwise.
    let configuration: String
    let sgemm: FnSgemm
    let sgemv: FnSgemv?
    private let setThreadsInt: FnSetThreadsInt?
    private let setThreadsDim: FnSetThreadsDim?
    private let threadLock = NSLock()
    private var currentThreads = 0

    /// Whether the library lets the engine choose its thread count.
    var setsThreads: Bool { setThreadsInt != nil || setThreadsDim != nil }

    /// One line for `sanad backends`: `OpenBLAS 0.3.21 … (core Zen) at /usr/lib/…/libopenblas.so.0`.
    var detail: String {
        let what = configuration.isEmpty ? kind.rawValue : configuration
        let gemv = sgemv == nil ? ", no cblas_sgemv" : ""
        let threads = setsThreads ? "" : ", thread count fixed by the library"
        return "\(what) at \(path)\(gemv)\(threads)"
    }

    // MARK: Loading

    private static let lock = NSLock()
    nonisolated(unsafe) private static var loaded: [String: BLASLibrary] = [:]

    /// The library for the first usable candidate, or the reasons none is usable.
    static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Result<BLASLibrary, BLASError>
    {
        var reasons: [String] = []
        for candidate in BLASLibraryLocator.candidates(option: option, environment: environment) {
            switch open(candidate) {
            case .success(let library): return .success(library)
            case .failure(let error): reasons.append(error.reason)
            }
        }
        return .failure(
            .libraryUnavailable(
                "no usable CBLAS library: " + reasons.joined(separator: "; ")
                    + ". Fix: \(BLASLibraryLocator.installHint)"
            ))
    }

    /// Loads and checks one candidate (cached by path once accepted).
    static func open(_ candidate: BLASLibraryLocator.Candidate) -> Result<BLASLibrary, BLASError> {
        lock.lock()
        defer { lock.unlock() }
        if let library = loaded[candidate.path] { return .success(library) }
        let shown = candidate.isSystemSearch ? candidate.path : "\(candidate.path) (\(candidate.source))"
        if !candidate.isSystemSearch && !FileManager.default.fileExists(atPath: candidate.path) {
            return .failure(.libraryUnavailable("\(shown) does not exist"))
        }
        // dlopen blocks on a FIFO and dies of SIGBUS on an ELF file cut short: only a regular file whose
        // segments lie inside it is handed to the loader.
        if !candidate.isSystemSearch, let problem = SharedLibraryFile.problem(path: candidate.path) {
            return .failure(.libraryUnavailable("\(shown) cannot be loaded: \(problem)"))
        }
        guard let handle = dlopen(candidate.path, RTLD_NOW | RTLD_LOCAL) else {
            let detail = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            let what = candidate.isSystemSearch ? "\(candidate.path) is not on the system loader path" : shown
            return .failure(.libraryUnavailable("\(what): \(detail)"))
        }
        switch make(handle: handle, candidate: candidate, shown: shown) {
        case .success(let library):
            loaded[candidate.path] = library
            return .success(library)
        case .failure(let error):
            dlclose(handle)
            return .failure(error)
        }
    }

    /// Resolves the functions of an opened library and checks it: 32-bit integers, and one small product that
    /// must come out right.
    private static func make(handle: UnsafeMutableRawPointer, candidate: BLASLibraryLocator.Candidate, shown: String)
        -> Result<BLASLibrary, BLASError>
    {
        guard let sgemmSymbol = dlsym(handle, "cblas_sgemm") else {
            return .failure(.libraryUnavailable("\(shown) does not export cblas_sgemm: it is not a CBLAS library"))
        }
        let path = candidate.isSystemSearch ? (mappedFile(containing: sgemmSymbol) ?? candidate.path) : candidate.path
        if let problem = integerWidthProblem(handle) {
            return .failure(.libraryUnavailable("\(path): \(problem)"))
        }
        let library = BLASLibrary(handle: handle, path: path, sgemm: unsafeBitCast(sgemmSymbol, to: FnSgemm.self))
        guard library.passesSmokeTest() else {
            return .failure(
                .libraryUnavailable("\(path): cblas_sgemm computed a wrong 2×3 · 3×2 product (not the CBLAS interface)")
            )
        }
        return .success(library)
    }

    /// Why the library's integers are not the 32-bit `int`s declared above, or nil. OpenBLAS says `USE64BITINT` in
    /// its configuration string; BLIS reports its BLAS integer size.
    private static func integerWidthProblem(_ handle: UnsafeMutableRawPointer) -> String? {
        if let config = dlsym(handle, "openblas_get_config").flatMap({ unsafeBitCast($0, to: FnString.self)() }) {
            let text = String(cString: config)
            if text.contains("USE64BITINT") {
                return "a 64-bit-integer OpenBLAS build (\(text)); Sanad calls the LP64 interface (32-bit ints)"
            }
        }
        if let size = dlsym(handle, "bli_info_get_blas_int_type_size") {
            let bits = unsafeBitCast(size, to: FnIntegerSize.self)() & 0xFFFF_FFFF
            if bits != 32 {
                return "BLIS built with \(bits)-bit BLAS integers; Sanad calls the LP64 interface (32-bit ints)"
            }
        }
        return nil
    }

    /// The file behind a symbol's address: the mapping in /proc/self/maps that holds it.
    private static func mappedFile(containing symbol: UnsafeMutableRawPointer) -> String? {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        let address = UInt(bitPattern: symbol)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5].hasPrefix("/") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let lo = UInt(range[0], radix: 16), let hi = UInt(range[1], radix: 16) else {
                continue
            }
            if lo <= address && address < hi { return fields[5...].joined(separator: " ") }
        }
        return nil
    }

    private init(handle: UnsafeMutableRawPointer, path: String, sgemm: FnSgemm) {
        self.path = path
        self.sgemm = sgemm
        sgemv = dlsym(handle, "cblas_sgemv").map { unsafeBitCast($0, to: FnSgemv.self) }
        setThreadsInt = dlsym(handle, "openblas_set_num_threads").map { unsafeBitCast($0, to: FnSetThreadsInt.self) }
        setThreadsDim =
            setThreadsInt == nil
            ? dlsym(handle, "bli_thread_set_num_threads").map { unsafeBitCast($0, to: FnSetThreadsDim.self) } : nil
        func string(_ name: String) -> String? {
            dlsym(handle, name).flatMap { unsafeBitCast($0, to: FnString.self)() }.map { String(cString: $0) }
        }
        if let config = string("openblas_get_config")?.trimmingCharacters(in: .whitespaces) {
            kind = .openBLAS
            // The configuration names the core for DYNAMIC_ARCH builds; add it where it does not.
            let core = string("openblas_get_corename").flatMap { config.contains($0) ? nil : " (core \($0))" }
            configuration = config + (core ?? "")
        } else {
            kind = dlsym(handle, "bli_info_get_version_str") != nil ? .blis : .generic
            configuration = ""
        }
    }

    /// `[1 2 3; 4 5 6] · [1 0 1; 0 1 1]ᵀ = [4 5; 10 11]`, through the same call shape the engine uses.
    private func passesSmokeTest() -> Bool {
        let a: [Float] = [1, 2, 3, 4, 5, 6]
        let b: [Float] = [1, 0, 1, 0, 1, 1]
        var c: [Float] = [-1, -1, -1, -1]
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    sgemm(
                        CBLAS.rowMajor, CBLAS.noTranspose, CBLAS.transpose, 2, 2, 3, 1, a.baseAddress, 3,
                        b.baseAddress, 3, 0, c.baseAddress, 2)
                }
            }
        }
        return c == [4, 5, 10, 11]
    }

    // MARK: Calls

    /// Sets the library's worker count when it differs from the last one set (the setting is process-wide). The
    /// engine sets 1 and runs one `sgemm` per worker of its own (see `BLASProducts`).
    func useThreads(_ count: Int) {
        threadLock.lock()
        defer { threadLock.unlock() }
        guard count != currentThreads else { return }
        if let setThreadsInt {
            setThreadsInt(Int32(clamping: count))
        } else if let setThreadsDim {
            setThreadsDim(Int64(count))
        }
        currentThreads = count
    }
}
