import CreditScoringPlugin
import SanadNative

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The functions of the system PostgreSQL client library (libpq.so.5) the receiver uses, found with dlopen through
/// `NativeLibrary` and declared from libpq's documented C API (no header is used).
public final class LibPQ: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias ConnectDB = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
    typealias Status = @convention(c) (OpaquePointer?) -> Int32
    typealias ErrorMessage = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias ExecParams =
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
            UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
        ) -> OpaquePointer?
    typealias GetValue = @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafePointer<CChar>?
    typealias Count = @convention(c) (OpaquePointer?) -> Int32
    typealias Clear = @convention(c) (OpaquePointer?) -> Void

    /// `CONNECTION_OK`, `PGRES_COMMAND_OK`, `PGRES_TUPLES_OK`.
    static let connectionOK: Int32 = 0
    static let commandOK: Int32 = 1
    static let tuplesOK: Int32 = 2

    let connect: ConnectDB
    let status: Status
    let errorMessage: ErrorMessage
    let execParams: ExecParams
    let resultStatus: Status
    let resultErrorMessage: ErrorMessage
    let getValue: GetValue
    let tupleCount: Count
    let fieldCount: Count
    let clear: Clear
    let finish: Clear
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "libpq", environmentVariable: "SANAD_LIBPQ", systemNames: ["libpq.so.5", "libpq.so"],
        installHint: "apt-get install libpq5 (scripts/setup installs it), or set SANAD_LIBPQ to the library file")

    init(_ lib: NativeLibrary) throws {
        connect = try lib.require("PQconnectdb", as: ConnectDB.self)
        status = try lib.require("PQstatus", as: Status.self)
        errorMessage = try lib.require("PQerrorMessage", as: ErrorMessage.self)
        execParams = try lib.require("PQexecParams", as: ExecParams.self)
        resultStatus = try lib.require("PQresultStatus", as: Status.self)
        resultErrorMessage = try lib.require("PQresultErrorMessage", as: ErrorMessage.self)
        getValue = try lib.require("PQgetvalue", as: GetValue.self)
        tupleCount = try lib.require("PQntuples", as: Count.self)
        fieldCount = try lib.require("PQnfields", as: Count.self)
        clear = try lib.require("PQclear", as: Clear.self)
        finish = try lib.require("PQfinish", as: Clear.self)
        path = lib.shownPath
    }

    public static func shared() throws -> LibPQ {
        let result = NativeLibrary.load(spec) { lib in
            Result { try LibPQ(lib) }.mapError { NativeLibraryError("\($0)") }
        }
        switch result {
        case .success(let lib): return lib
        case .failure(let error): throw CreditError.native(error.reason)
        }
    }
}

/// One PostgreSQL connection (not shared between threads).
public final class PostgresConnection {
    let lib: LibPQ
    private let handle: OpaquePointer

    /// Connects with a libpq connection string (`host=/tmp/sock dbname=credit user=sanad`).
    public init(_ conninfo: String, lib: LibPQ) throws {
        self.lib = lib
        guard let handle = lib.connect(conninfo) else { throw CreditError.native("PQconnectdb returned nothing") }
        guard lib.status(handle) == LibPQ.connectionOK else {
            let message = lib.errorMessage(handle).map { String(cString: $0) } ?? "?"
            lib.finish(handle)
            throw CreditError.io(
                "cannot connect to PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        self.handle = handle
    }

    deinit { lib.finish(handle) }

    /// Runs `sql` with text parameters ($1, $2, …; nil is NULL); returns the rows as text (nil for NULL).
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let cStrings = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for c in cStrings { free(c) } }
        let pointers = cStrings.map { UnsafePointer<CChar>($0) }
        guard let result = lib.execParams(handle, sql, Int32(parameters.count), nil, pointers, nil, nil, 0) else {
            let message = lib.errorMessage(handle).map { String(cString: $0) } ?? "no result"
            throw CreditError.io("PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        defer { lib.clear(result) }
        let status = lib.resultStatus(result)
        guard status == LibPQ.commandOK || status == LibPQ.tuplesOK else {
            let message = lib.resultErrorMessage(result).map { String(cString: $0) } ?? "?"
            throw CreditError.io("PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard status == LibPQ.tuplesOK else { return [] }
        let rows = lib.tupleCount(result)
        let columns = lib.fieldCount(result)
        return (0..<rows).map { r in
            (0..<columns).map { c in lib.getValue(result, r, c).map { String(cString: $0) } }
        }
    }
}
