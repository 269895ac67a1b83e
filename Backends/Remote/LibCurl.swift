import Foundation
import SanadNative

/// The few functions of the system libcurl (`libcurl.so.4`) the `openai` engine calls for `https://` servers, found
/// with dlopen through `NativeLibrary` and declared here from libcurl's documented C API (no header is used).
/// `curl_easy_setopt` and `curl_easy_getinfo` are variadic in C; they are declared with the one argument each call
/// passes (a pointer or a long), which the x86-64 and AArch64 Linux calling conventions pass as for a fixed
/// argument.
final class LibCurl: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias Handle = OpaquePointer
    typealias EasyInit = @convention(c) () -> Handle?
    typealias EasyCleanup = @convention(c) (Handle?) -> Void
    typealias SetPointer = @convention(c) (Handle?, Int32, UnsafeRawPointer?) -> Int32
    typealias SetLong = @convention(c) (Handle?, Int32, Int) -> Int32
    typealias GetLong = @convention(c) (Handle?, Int32, UnsafeMutablePointer<Int>?) -> Int32
    typealias StringOfCode = @convention(c) (Int32) -> UnsafePointer<CChar>?
    typealias ListAppend = @convention(c) (Handle?, UnsafePointer<CChar>?) -> Handle?
    typealias ListFree = @convention(c) (Handle?) -> Void
    typealias MultiInit = @convention(c) () -> Handle?
    typealias MultiHandle = @convention(c) (Handle?, Handle?) -> Int32
    typealias MultiPerform = @convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> Int32
    typealias MultiPoll =
        @convention(c) (Handle?, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<Int32>?)
        -> Int32
    /// `curl_multi_info_read`: a `struct CURLMsg *` — on 64-bit Linux its kind (`int`, 1 = done) at byte 0, the easy
    /// handle at byte 8 and the union whose first member read as `CURLcode` (the result) at byte 16.
    typealias MultiInfoRead = @convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> UnsafeRawPointer?
    typealias MultiCleanup = @convention(c) (Handle?) -> Int32
    typealias GlobalInit = @convention(c) (Int) -> Int32
    typealias Version = @convention(c) () -> UnsafePointer<CChar>?
    /// `size_t write(char *data, size_t size, size_t count, void *user)`.
    typealias WriteCallback = @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

    /// `CURLOPT_*` numbers (curl.h: a type base — long 0, object pointer 10000, function pointer 20000 — plus the
    /// option's number).
    enum Option {
        static let writeData: Int32 = 10001
        static let url: Int32 = 10002
        static let errorBuffer: Int32 = 10010
        static let writeFunction: Int32 = 20011
        static let httpHeader: Int32 = 10023
        static let post: Int32 = 47
        static let postFieldSize: Int32 = 60
        static let verifyPeer: Int32 = 64
        static let caInfo: Int32 = 10065
        static let connectTimeout: Int32 = 78
        static let verifyHost: Int32 = 81
        static let noSignal: Int32 = 99
        static let copyPostFields: Int32 = 10165
    }

    /// `CURLINFO_RESPONSE_CODE` (a long: 0x200000 + 2).
    static let responseCode: Int32 = 0x20_0002

    let easyInit: EasyInit
    let easyCleanup: EasyCleanup
    let setPointer: SetPointer
    let setLong: SetLong
    let getLong: GetLong
    let errorString: StringOfCode
    let listAppend: ListAppend
    let listFree: ListFree
    let multiInit: MultiInit
    let multiAdd: MultiHandle
    let multiRemove: MultiHandle
    let multiPerform: MultiPerform
    let multiPoll: MultiPoll
    let multiInfoRead: MultiInfoRead
    let multiCleanup: MultiCleanup
    /// `libcurl/7.88.1 OpenSSL/3.0.17 …`.
    let version: String
    let path: String

    static let spec = NativeLibrarySpec(
        displayName: "libcurl", environmentVariable: "SANAD_LIBCURL", systemNames: ["libcurl.so.4", "libcurl.so"],
        installHint: "apt-get install libcurl4 (scripts/setup installs it), or set SANAD_LIBCURL to the library file")

    init(_ lib: NativeLibrary) throws {
        easyInit = try lib.require("curl_easy_init", as: EasyInit.self)
        easyCleanup = try lib.require("curl_easy_cleanup", as: EasyCleanup.self)
        setPointer = try lib.require("curl_easy_setopt", as: SetPointer.self)
        setLong = try lib.require("curl_easy_setopt", as: SetLong.self)
        getLong = try lib.require("curl_easy_getinfo", as: GetLong.self)
        errorString = try lib.require("curl_easy_strerror", as: StringOfCode.self)
        listAppend = try lib.require("curl_slist_append", as: ListAppend.self)
        listFree = try lib.require("curl_slist_free_all", as: ListFree.self)
        multiInit = try lib.require("curl_multi_init", as: MultiInit.self)
        multiAdd = try lib.require("curl_multi_add_handle", as: MultiHandle.self)
        multiRemove = try lib.require("curl_multi_remove_handle", as: MultiHandle.self)
        multiPerform = try lib.require("curl_multi_perform", as: MultiPerform.self)
        multiPoll = try lib.require("curl_multi_poll", as: MultiPoll.self)
        multiInfoRead = try lib.require("curl_multi_info_read", as: MultiInfoRead.self)
        multiCleanup = try lib.require("curl_multi_cleanup", as: MultiCleanup.self)
        let globalInit = try lib.require("curl_global_init", as: GlobalInit.self)
        let versionFunction = try lib.require("curl_version", as: Version.self)
        version = versionFunction().map { String(cString: $0) } ?? "?"
        path = lib.shownPath
        // CURL_GLOBAL_ALL (SSL and the rest), once per process: `load` opens the library once.
        guard globalInit(3) == 0 else { throw NativeLibraryError("\(path): curl_global_init failed") }
        guard version.contains("SSL") || version.contains("TLS") else {
            throw NativeLibraryError("\(path) (\(version)) was built without TLS; https:// needs a TLS build")
        }
    }

    /// The system libcurl (or the file `SANAD_LIBCURL` names), or why it cannot be used; loaded and initialised
    /// once per process.
    static let shared: Result<LibCurl, NativeLibraryError> = NativeLibrary.load(spec) { lib in
        Result { try LibCurl(lib) }.mapError { NativeLibraryError("\($0)") }
    }
}
