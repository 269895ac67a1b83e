import Foundation

/// zlib's `compress2` (`libz.so.1`, Debian's essential `zlib1g`) found with dlopen through `NativeLibrary`, for the
/// PDF streams the forms' exports deflate (`/FlateDecode`). Proved to compute before it is used: `load` deflates
/// and inflates a short text and expects it back.
public final class ZlibLibrary: @unchecked Sendable {  // immutable after init: C function pointers only
    /// `int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level)`; `uLong` is
    /// `unsigned long` (64 bits on Linux).
    typealias Compress =
        @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt>?, UnsafePointer<UInt8>?, UInt, Int32)
        -> Int32
    /// `int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen)`.
    typealias Uncompress =
        @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt>?, UnsafePointer<UInt8>?, UInt) -> Int32
    typealias Bound = @convention(c) (UInt) -> UInt

    let compress: Compress
    let uncompress: Uncompress
    let bound: Bound
    /// The library file, with where it was found.
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "zlib", environmentVariable: "SANAD_ZLIB", systemNames: ["libz.so.1"],
        installHint: "apt-get install zlib1g, or set SANAD_ZLIB to the library file")

    init(_ lib: NativeLibrary) throws {
        compress = try lib.require("compress2", as: Compress.self)
        uncompress = try lib.require("uncompress", as: Uncompress.self)
        bound = try lib.require("compressBound", as: Bound.self)
        path = lib.shownPath
        let sample = Array(String(repeating: "Sanad deflates PDF streams. ", count: 8).utf8)
        guard let packed = deflate(sample), packed.count < sample.count, inflate(packed, size: sample.count) == sample
        else { throw NativeLibraryError("\(path) did not deflate and inflate a test text back: it does not compute") }
    }

    /// The system zlib (or the file `SANAD_ZLIB` names), proved to compute, or why it cannot be used.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<
        ZlibLibrary, NativeLibraryError
    > {
        NativeLibrary.load(spec, environment: environment) { lib in
            Result { try ZlibLibrary(lib) }.mapError { NativeLibraryError("\($0)") }
        }
    }

    /// `bytes` in the zlib format (RFC 1950, what a PDF's `/FlateDecode` reads) at the best compression, or nil.
    public func deflate(_ bytes: [UInt8]) -> [UInt8]? {
        var size = bound(UInt(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let rc = out.withUnsafeMutableBufferPointer { dest in
            bytes.withUnsafeBufferPointer { compress(dest.baseAddress, &size, $0.baseAddress, UInt($0.count), 9) }
        }
        return rc == 0 ? Array(out.prefix(Int(size))) : nil
    }

    /// `packed` inflated, when it holds exactly `size` bytes; else nil.
    public func inflate(_ packed: [UInt8], size: Int) -> [UInt8]? {
        var length = UInt(size)
        var out = [UInt8](repeating: 0, count: max(size, 1))
        let rc = out.withUnsafeMutableBufferPointer { dest in
            packed.withUnsafeBufferPointer { uncompress(dest.baseAddress, &length, $0.baseAddress, UInt($0.count)) }
        }
        return rc == 0 && Int(length) == size ? Array(out.prefix(size)) : nil
    }
}
