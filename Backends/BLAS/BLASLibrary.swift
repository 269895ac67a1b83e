import Foundation
import GGUF
import SanadNative

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

    /// The search as `NativeLibrary` runs it.
    public static let spec = NativeLibrarySpec(
        displayName: "CBLAS library", environmentVariable: environmentVariable, systemNames: systemNames,
        installHint: installHint)

    /// The candidates for `option` (the config's `library` / the backend's init parameter) and `environment`.
    public static func candidates(option: String?, environment: [String: String]) -> [NativeLibrarySpec.Candidate] {
        spec.candidates(option: option, environment: environment)
    }
}

/// A loaded CBLAS library with the functions the engine calls. Loaded once per path and never unloaded (OpenBLAS
/// keeps a process-wide thread pool).
// @unchecked Sendable: function pointers immutable; the thread count behind `threadLock`
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

    /// The library for the first usable candidate (opened once per path), or the reasons none is usable.
    /// With `probe` (always, but in the probe's own child process) the library is first run in a child process
    /// (`NativeProbe`, `BLASProbe`): one that dies, hangs or computes wrong there is refused with what happened.
    static func resolve(
        option: String?, environment: [String: String] = ProcessInfo.processInfo.environment, probe: Bool = true
    )
        -> Result<BLASLibrary, BLASError>
    {
        NativeLibrary.load(
            BLASLibraryLocator.spec, option: option, environment: environment,
            make: { make($0, probe: probe, environment: environment) }
        ).mapError { .libraryUnavailable($0.reason) }
    }

    /// Resolves the functions of an opened library and checks it: 32-bit integers, the probe in a child process,
    /// and one small product that must come out right.
    private static func make(_ native: NativeLibrary, probe: Bool, environment: [String: String])
        -> Result<BLASLibrary, NativeLibraryError>
    {
        guard let sgemm = native.function("cblas_sgemm", as: FnSgemm.self) else {
            return .failure(
                NativeLibraryError("\(native.shownPath) does not export cblas_sgemm: it is not a CBLAS library"))
        }
        if let problem = integerWidthProblem(native) {
            return .failure(NativeLibraryError("\(native.path): \(problem)"))
        }
        if probe {
            let verdict = NativeProbe.verdict(kind: "blas", library: native.path, environment: environment)
            guard verdict.passed else {
                return .failure(
                    NativeLibraryError(
                        NativeProbe.refusal(displayName: "CBLAS", library: native.shownPath, verdict: verdict)))
            }
        }
        let library = BLASLibrary(native: native, sgemm: sgemm)
        guard library.passesSmokeTest() else {
            return .failure(
                NativeLibraryError(
                    "\(native.path): cblas_sgemm computed a wrong 2×3 · 3×2 product (not the CBLAS interface)"))
        }
        return .success(library)
    }

    /// Why the library's integers are not the 32-bit `int`s declared above, or nil. OpenBLAS says `USE64BITINT` in
    /// its configuration string; BLIS reports its BLAS integer size.
    private static func integerWidthProblem(_ native: NativeLibrary) -> String? {
        if let config = native.function("openblas_get_config", as: FnString.self)?() {
            let text = String(cString: config)
            if text.contains("USE64BITINT") {
                return "a 64-bit-integer OpenBLAS build (\(text)); Sanad calls the LP64 interface (32-bit ints)"
            }
        }
        if let size = native.function("bli_info_get_blas_int_type_size", as: FnIntegerSize.self) {
            let bits = size() & 0xFFFF_FFFF
            if bits != 32 {
                return "BLIS built with \(bits)-bit BLAS integers; Sanad calls the LP64 interface (32-bit ints)"
            }
        }
        return nil
    }

    private init(native: NativeLibrary, sgemm: FnSgemm) {
        self.path = native.path
        self.sgemm = sgemm
        sgemv = native.function("cblas_sgemv", as: FnSgemv.self)
        setThreadsInt = native.function("openblas_set_num_threads", as: FnSetThreadsInt.self)
        setThreadsDim =
            setThreadsInt == nil ? native.function("bli_thread_set_num_threads", as: FnSetThreadsDim.self) : nil
        func string(_ name: String) -> String? {
            native.function(name, as: FnString.self)?().map { String(cString: $0) }
        }
        if let config = string("openblas_get_config")?.trimmingCharacters(in: .whitespaces) {
            kind = .openBLAS
            // The configuration names the core for DYNAMIC_ARCH builds; add it where it does not.
            let core = string("openblas_get_corename").flatMap { config.contains($0) ? nil : " (core \($0))" }
            configuration = config + (core ?? "")
        } else {
            kind = native.symbol("bli_info_get_version_str") != nil ? .blis : .generic
            configuration = ""
        }
    }

    /// `[1 2 3; 4 5 6] · [1 0 1; 0 1 1]ᵀ = [4 5; 10 11]`, through the same call shape the engine uses.
    func passesSmokeTest() -> Bool {
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
