import Foundation
import SanadFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where to look for one optional native library, in order, and what to tell a person when none is usable.
///
/// The first source that names a file decides: a path from the config (`option`) or from the environment variable
/// is used alone, because a person pointed at that file on purpose. With neither, the system loader is asked for
/// each of `systemNames` in turn.
public struct NativeLibrarySpec: Sendable, Equatable {
    /// A few words for messages: `SQLite`, `OpenSSL libcrypto`, `libpq`.
    public var displayName: String
    /// The environment variable that names the library file (`SANAD_SQLITE`), or nil.
    public var environmentVariable: String?
    /// The names handed to the system loader, in order of preference (`libsqlite3.so.0`).
    public var systemNames: [String]
    /// How to install it: `apt-get install libsqlite3-0 (scripts/setup installs it)`.
    public var installHint: String

    public init(displayName: String, environmentVariable: String?, systemNames: [String], installHint: String) {
        self.displayName = displayName
        self.environmentVariable = environmentVariable
        self.systemNames = systemNames
        self.installHint = installHint
    }

    /// One place to try, with where it came from (for messages).
    public struct Candidate: Sendable, Equatable {
        /// A path, or a bare file name for the loader's search.
        public var path: String
        /// `config option "library"`, `SANAD_SQLITE`, `system loader path`.
        public var source: String
        /// Whether `path` is a bare name the system loader searches for.
        public var isSystemSearch: Bool { !path.contains("/") }

        public init(path: String, source: String) {
            self.path = path
            self.source = source
        }
    }

    /// The candidates for a config `option` (a `library` path) and the process `environment`.
    public func candidates(option: String?, environment: [String: String]) -> [Candidate] {
        if let option, !option.isEmpty { return [Candidate(path: option, source: "config option \"library\"")] }
        if let variable = environmentVariable, let value = environment[variable], !value.isEmpty {
            return [Candidate(path: value, source: variable)]
        }
        return systemNames.map { Candidate(path: $0, source: "system loader path") }
    }
}

/// Why a native library could not be used, in words a person can act on.
public struct NativeLibraryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `no usable SQLite: libsqlite3.so.0 is not on the system loader path (…). Fix: apt-get install …`.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// An opened shared library (`dlopen`). One that was accepted is never closed: the libraries Sanad loads keep
/// process-wide state (thread pools, log callbacks).
public final class NativeLibrary: @unchecked Sendable {  // immutable after init; the handle is only read
    /// The file that was loaded: the path given, or the file the system loader found (from /proc/self/maps).
    public let path: String
    /// Where the path came from (`SANAD_SQLITE`, `system loader path`, …).
    public let source: String
    private let handle: UnsafeMutableRawPointer

    private init(handle: UnsafeMutableRawPointer, path: String, source: String) {
        self.handle = handle
        self.path = path
        self.source = source
    }

    /// The address of `name`, or nil when the library does not export it.
    public func symbol(_ name: String) -> UnsafeMutableRawPointer? { dlsym(handle, name) }

    /// `name` as a C function of type `T` (a `@convention(c)` function type), or nil when it is not exported.
    public func function<T>(_ name: String, as type: T.Type) -> T? {
        symbol(name).map { unsafeBitCast($0, to: type) }
    }

    /// `name` as a C function of type `T`, or an error naming the library and the symbol.
    public func require<T>(_ name: String, as type: T.Type) throws -> T {
        guard let function = function(name, as: type) else {
            throw NativeLibraryError("\(path) does not export \(name): it is not the expected library or too old")
        }
        return function
    }

    // MARK: Loading

    private static let lock = NSLock()
    /// What `make` built from each accepted path, keyed by the built type and the path.
    nonisolated(unsafe) private static var made: [String: Any] = [:]

    /// The first candidate of `spec` that opens and that `make` accepts, or every candidate's reason with the
    /// install hint. `precheck` may refuse a named file before `dlopen` sees it (by reading its symbol table, for
    /// example); `make` checks the opened library (symbols, versions, a smoke test) and builds what the caller keeps.
    /// A refused library is closed again, so its dependencies cannot be bound by a later, correct load. What `make`
    /// built is cached by path.
    public static func load<T>(
        _ spec: NativeLibrarySpec, option: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        precheck: (NativeLibrarySpec.Candidate) -> String? = { _ in nil },
        make: (NativeLibrary) -> Result<T, NativeLibraryError>
    ) -> Result<T, NativeLibraryError> {
        lock.lock()
        defer { lock.unlock() }
        var reasons: [String] = []
        for candidate in spec.candidates(option: option, environment: environment) {
            let key = "\(T.self)|\(candidate.path)"
            if let built = made[key] as? T { return .success(built) }
            let shown = candidate.isSystemSearch ? candidate.path : "\(candidate.path) (\(candidate.source))"
            if !candidate.isSystemSearch {
                // dlopen blocks on a FIFO and dies of SIGBUS on an ELF file cut short.
                if !FileManager.default.fileExists(atPath: candidate.path) {
                    reasons.append("\(shown) does not exist")
                    continue
                }
                if let problem = SharedLibraryFile.problem(path: candidate.path) {
                    reasons.append("\(shown) cannot be loaded: \(problem)")
                    continue
                }
                if let problem = precheck(candidate) {
                    reasons.append(problem)
                    continue
                }
            }
            guard let handle = dlopen(candidate.path, RTLD_NOW | RTLD_LOCAL) else {
                let detail = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
                let what = candidate.isSystemSearch ? "\(candidate.path) is not on the system loader path" : shown
                reasons.append("\(what): \(detail)")
                continue
            }
            let path = candidate.isSystemSearch ? (loadedFile(handle: handle) ?? candidate.path) : candidate.path
            switch make(NativeLibrary(handle: handle, path: path, source: candidate.source)) {
            case .success(let built):
                made[key] = built
                return .success(built)
            case .failure(let error):
                dlclose(handle)
                reasons.append(error.reason)
            }
        }
        return .failure(
            NativeLibraryError(
                "no usable \(spec.displayName): " + reasons.joined(separator: "; ") + ". Fix: \(spec.installHint)"))
    }

    /// The first candidate of `spec` that opens, as it is (no checks beyond a readable regular file).
    public static func load(
        _ spec: NativeLibrarySpec, option: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result<NativeLibrary, NativeLibraryError> {
        load(spec, option: option, environment: environment) { .success($0) }
    }

    /// The library as `make` sees it, with where it was found: `/usr/lib/…/libsqlite3.so.0 (system loader path)`.
    public var shownPath: String { "\(path) (\(source))" }

    /// Why `path` is not a regular file that can be opened for reading (a FIFO, a folder, missing), or nil. For the
    /// files a native library is handed (an image for OCR, for example): `open` never blocks on a FIFO here.
    public static func regularFileProblem(_ path: String) -> String? { RegularFile.problem(path: path) }

    /// The file the system loader opened for `handle` (`dlinfo` with `RTLD_DI_LINKMAP` on Linux), or nil.
    private static func loadedFile(handle: UnsafeMutableRawPointer) -> String? {
        #if os(Linux)
            // `int dlinfo(void *handle, int request, void *info)`; glibc declares it only under _GNU_SOURCE, so it
            // is looked up. RTLD_DI_LINKMAP (2) gives a `struct link_map *`, whose second field is `char *l_name`.
            typealias FnDlinfo = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dlinfo") else { return nil }
            let dlinfo = unsafeBitCast(symbol, to: FnDlinfo.self)
            var map: UnsafeMutableRawPointer?
            guard dlinfo(handle, 2, &map) == 0, let map else { return nil }
            guard let name = map.load(fromByteOffset: MemoryLayout<UInt>.size, as: UnsafePointer<CChar>?.self) else {
                return nil
            }
            let path = String(cString: name)
            return path.hasPrefix("/") ? path : nil
        #else
            return nil
        #endif
    }
}
