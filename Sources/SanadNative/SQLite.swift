import Foundation

/// The few functions of the system SQLite (`libsqlite3.so.0`) Sanad calls (the form store, reading a phone's
/// `chat.db`), found with dlopen through `NativeLibrary` (declared here from the documented C API; no header is
/// used).
public final class SQLiteLibrary: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias Open =
        @convention(c) (
            UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?
        ) -> Int32
    typealias Close = @convention(c) (OpaquePointer?) -> Int32
    typealias Prepare =
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
            UnsafeMutablePointer<UnsafePointer<CChar>?>?
        ) -> Int32
    /// `sqlite3_bind_text`; the destructor is passed as an integer (`SQLITE_TRANSIENT` is -1).
    typealias BindText = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Int) -> Int32
    typealias BindInt64 = @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
    typealias Step = @convention(c) (OpaquePointer?) -> Int32
    typealias ColumnText = @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    typealias ColumnInt64 = @convention(c) (OpaquePointer?, Int32) -> Int64
    typealias ColumnBytes = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias ColumnCount = @convention(c) (OpaquePointer?) -> Int32
    typealias Finalize = @convention(c) (OpaquePointer?) -> Int32
    typealias ErrorMessage = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias BusyTimeout = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias Version = @convention(c) () -> UnsafePointer<CChar>?

    let open: Open
    let close: Close
    let prepare: Prepare
    let bindText: BindText
    let bindInt64: BindInt64
    let step: Step
    let columnText: ColumnText
    let columnInt64: ColumnInt64
    let columnBytes: ColumnBytes
    let columnCount: ColumnCount
    let finalize: Finalize
    let errorMessage: ErrorMessage
    let busyTimeout: BusyTimeout
    /// `3.40.1`.
    public let version: String
    /// The library file.
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "SQLite", environmentVariable: "SANAD_SQLITE", systemNames: ["libsqlite3.so.0", "libsqlite3.so"],
        installHint: "apt-get install libsqlite3-0 (scripts/setup installs it), or set SANAD_SQLITE to the library file"
    )

    init(_ lib: NativeLibrary) throws {
        open = try lib.require("sqlite3_open_v2", as: Open.self)
        close = try lib.require("sqlite3_close_v2", as: Close.self)
        prepare = try lib.require("sqlite3_prepare_v2", as: Prepare.self)
        bindText = try lib.require("sqlite3_bind_text", as: BindText.self)
        bindInt64 = try lib.require("sqlite3_bind_int64", as: BindInt64.self)
        step = try lib.require("sqlite3_step", as: Step.self)
        columnText = try lib.require("sqlite3_column_text", as: ColumnText.self)
        columnInt64 = try lib.require("sqlite3_column_int64", as: ColumnInt64.self)
        columnBytes = try lib.require("sqlite3_column_bytes", as: ColumnBytes.self)
        columnCount = try lib.require("sqlite3_column_count", as: ColumnCount.self)
        finalize = try lib.require("sqlite3_finalize", as: Finalize.self)
        errorMessage = try lib.require("sqlite3_errmsg", as: ErrorMessage.self)
        busyTimeout = try lib.require("sqlite3_busy_timeout", as: BusyTimeout.self)
        let libversion = try lib.require("sqlite3_libversion", as: Version.self)
        version = libversion().map { String(cString: $0) } ?? "?"
        path = lib.shownPath
    }

    /// The system SQLite (or the file `SANAD_SQLITE` names), or why it cannot be used.
    public static func load() -> Result<SQLiteLibrary, NativeLibraryError> {
        NativeLibrary.load(spec) { lib in
            Result { try SQLiteLibrary(lib) }.mapError { NativeLibraryError("\($0)") }
        }
    }
}

/// One open database connection. Not shared between threads (one store per process command or tool call). Errors
/// are made by `fail` from a message that names the file, so each caller keeps its own error type.
public final class SQLiteDatabase {
    let lib: SQLiteLibrary
    public let file: String
    private var handle: OpaquePointer?
    private let fail: (String) -> any Error

    static let ok: Int32 = 0
    static let row: Int32 = 100
    static let done: Int32 = 101

    /// Opens `file` read-write (creating it), or read-only.
    public init(lib: SQLiteLibrary, file: String, readOnly: Bool = false, fail: @escaping (String) -> any Error) throws
    {
        self.lib = lib
        self.file = file
        self.fail = fail
        var db: OpaquePointer?
        let flags: Int32 = readOnly ? 0x1 | 0x10000 : 0x2 | 0x4 | 0x10000  // READONLY or READWRITE | CREATE; FULLMUTEX
        let rc = lib.open(file, &db, flags, nil)
        guard rc == Self.ok, db != nil else {
            let message = db.flatMap { lib.errorMessage($0) }.map { String(cString: $0) } ?? "error \(rc)"
            _ = lib.close(db)
            throw fail("\(file): cannot open the SQLite database: \(message)")
        }
        handle = db
        _ = lib.busyTimeout(db, 5000)
    }

    deinit { _ = lib.close(handle) }

    /// A text or integer bound to a `?` parameter, or read from a column.
    public enum Value: Equatable {
        case text(String)
        case int(Int64)

        public var text: String {
            switch self {
            case .text(let s): return s
            case .int(let i): return String(i)
            }
        }

        public var int: Int64 {
            switch self {
            case .text(let s): return Int64(s) ?? 0
            case .int(let i): return i
            }
        }
    }

    private func failure(_ what: String) -> any Error {
        let message = lib.errorMessage(handle).map { String(cString: $0) } ?? "unknown error"
        return fail("\(file): \(what): \(message)")
    }

    /// Runs one statement with `bindings`; returns its rows (integer columns as `.int`, the rest as `.text`).
    /// Text is bound and read by its length in bytes, never up to a NUL: a value with a NUL is stored whole.
    @discardableResult
    public func run(_ sql: String, _ bindings: [Value] = [], integerColumns: Set<Int> = []) throws -> [[Value]] {
        var statement: OpaquePointer?
        guard lib.prepare(handle, sql, -1, &statement, nil) == Self.ok, statement != nil else {
            throw failure("cannot prepare \(sql.prefix(40))…")
        }
        defer { _ = lib.finalize(statement) }
        for (i, value) in bindings.enumerated() {
            let position = Int32(i + 1)
            let rc: Int32
            switch value {
            case .text(let s):
                guard let length = Int32(exactly: s.utf8.count) else {
                    throw fail("\(file): parameter \(position) is \(s.utf8.count) bytes, over SQLite's limit")
                }
                rc = lib.bindText(statement, position, s, length, -1)
            case .int(let n): rc = lib.bindInt64(statement, position, n)
            }
            guard rc == Self.ok else { throw failure("cannot bind parameter \(position)") }
        }
        var rows: [[Value]] = []
        while true {
            let rc = lib.step(statement)
            if rc == Self.done { return rows }
            guard rc == Self.row else { throw failure("\(sql.prefix(40))… failed") }
            let columns = lib.columnCount(statement)
            rows.append(
                (0..<columns).map { c in
                    if integerColumns.contains(Int(c)) { return .int(lib.columnInt64(statement, c)) }
                    guard let text = lib.columnText(statement, c) else { return .text("") }
                    let length = Int(lib.columnBytes(statement, c))
                    return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
                })
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE … COMMIT` transaction; rolls back when it throws.
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }
}
