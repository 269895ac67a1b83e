import Foundation

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

/// An opened shared library (`dlopen`), never closed: the libraries Sanad loads keep process-wide state.
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
    nonisolated(unsafe) private static var opened: [String: NativeLibrary] = [:]

    /// The first candidate of `spec` that opens and passes `accept` (which may check symbols and versions and
    /// returns a reason to refuse it), or every candidate's reason with the install hint.
    public static func load(
        _ spec: NativeLibrarySpec, option: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        accept: (NativeLibrary) -> String? = { _ in nil }
    ) -> Result<NativeLibrary, NativeLibraryError> {
        var reasons: [String] = []
        for candidate in spec.candidates(option: option, environment: environment) {
            switch open(candidate) {
            case .success(let library):
                if let problem = accept(library) {
                    reasons.append("\(library.path): \(problem)")
                } else {
                    return .success(library)
                }
            case .failure(let error):
                reasons.append(error.reason)
            }
        }
        return .failure(
            NativeLibraryError(
                "no usable \(spec.displayName): " + reasons.joined(separator: "; ") + ". Fix: \(spec.installHint)"))
    }

    /// Opens one candidate (cached by path). A path must name a regular file: a FIFO or a device would block or
    /// mislead `dlopen`, so it is refused before `dlopen` sees it.
    public static func open(_ candidate: NativeLibrarySpec.Candidate) -> Result<NativeLibrary, NativeLibraryError> {
        lock.lock()
        defer { lock.unlock() }
        if let library = opened[candidate.path] { return .success(library) }
        let shown = candidate.isSystemSearch ? candidate.path : "\(candidate.path) (\(candidate.source))"
        if !candidate.isSystemSearch, let problem = regularFileProblem(candidate.path) {
            return .failure(NativeLibraryError("\(shown) \(problem)"))
        }
        guard let handle = dlopen(candidate.path, RTLD_NOW | RTLD_LOCAL) else {
            let detail = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            let what = candidate.isSystemSearch ? "\(candidate.path) is not on the system loader path" : shown
            return .failure(NativeLibraryError("\(what): \(detail)"))
        }
        let path = candidate.isSystemSearch ? (loadedFile(handle: handle) ?? candidate.path) : candidate.path
        let library = NativeLibrary(handle: handle, path: path, source: candidate.source)
        opened[candidate.path] = library
        return .success(library)
    }

    /// Why `path` is not a readable regular file, or nil. Uses `stat`, which never blocks on a FIFO.
    public static func regularFileProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? "does not exist" : "cannot be read: \(String(cString: strerror(errno)))"
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return "is not a regular file" }
        guard access(path, R_OK) == 0 else { return "is not readable" }
        return nil
    }

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
