import Foundation
import SanadArchive
import SanadNative

/// The functions of the system OpenSSL `libcrypto` (libcrypto.so.3) that signed documents (credit records,
/// generation receipts) use: Ed25519 keys, signatures and verification, SHA-256, random bytes. Found with dlopen
/// through `NativeLibrary`; the C types are declared here from OpenSSL's documented API (no header is used).
public final class LibCrypto: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias NewRawPrivateKey =
        @convention(c) (Int32, OpaquePointer?, UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    typealias NewRawPublicKey = NewRawPrivateKey
    typealias GetRawKey =
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32
    typealias PKeyFree = @convention(c) (OpaquePointer?) -> Void
    typealias MDContextNew = @convention(c) () -> OpaquePointer?
    typealias MDContextFree = @convention(c) (OpaquePointer?) -> Void
    typealias DigestSignInit =
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, OpaquePointer?, OpaquePointer?
        )
        -> Int32
    typealias DigestSign =
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int
        )
        -> Int32
    typealias DigestVerify =
        @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int) -> Int32
    typealias SHA256Method = @convention(c) () -> OpaquePointer?
    typealias DigestInit = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias DigestUpdate = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    typealias DigestFinal =
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
    typealias RandomBytes = @convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32
    typealias Version = @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// `EVP_PKEY_ED25519` (= NID_ED25519, 1087).
    static let ed25519: Int32 = 1087

    let newRawPrivateKey: NewRawPrivateKey
    let newRawPublicKey: NewRawPublicKey
    let getRawPublicKey: GetRawKey
    let pkeyFree: PKeyFree
    let mdContextNew: MDContextNew
    let mdContextFree: MDContextFree
    let digestSignInit: DigestSignInit
    let digestSign: DigestSign
    let digestVerifyInit: DigestSignInit
    let digestVerify: DigestVerify
    let sha256Method: SHA256Method
    let digestInit: DigestInit
    let digestUpdate: DigestUpdate
    let digestFinal: DigestFinal
    let randomBytes: RandomBytes
    /// `OpenSSL 3.0.x …`.
    public let version: String
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "OpenSSL libcrypto", environmentVariable: "SANAD_LIBCRYPTO",
        systemNames: ["libcrypto.so.3", "libcrypto.so"],
        installHint: "apt-get install libssl3 (scripts/setup installs it), or set SANAD_LIBCRYPTO to the library file")

    init(_ lib: NativeLibrary) throws {
        newRawPrivateKey = try lib.require("EVP_PKEY_new_raw_private_key", as: NewRawPrivateKey.self)
        newRawPublicKey = try lib.require("EVP_PKEY_new_raw_public_key", as: NewRawPublicKey.self)
        getRawPublicKey = try lib.require("EVP_PKEY_get_raw_public_key", as: GetRawKey.self)
        pkeyFree = try lib.require("EVP_PKEY_free", as: PKeyFree.self)
        mdContextNew = try lib.require("EVP_MD_CTX_new", as: MDContextNew.self)
        mdContextFree = try lib.require("EVP_MD_CTX_free", as: MDContextFree.self)
        digestSignInit = try lib.require("EVP_DigestSignInit", as: DigestSignInit.self)
        digestSign = try lib.require("EVP_DigestSign", as: DigestSign.self)
        digestVerifyInit = try lib.require("EVP_DigestVerifyInit", as: DigestSignInit.self)
        digestVerify = try lib.require("EVP_DigestVerify", as: DigestVerify.self)
        sha256Method = try lib.require("EVP_sha256", as: SHA256Method.self)
        digestInit = try lib.require("EVP_DigestInit_ex", as: DigestInit.self)
        digestUpdate = try lib.require("EVP_DigestUpdate", as: DigestUpdate.self)
        digestFinal = try lib.require("EVP_DigestFinal_ex", as: DigestFinal.self)
        randomBytes = try lib.require("RAND_bytes", as: RandomBytes.self)
        let versionText = try lib.require("OpenSSL_version", as: Version.self)
        version = versionText(0).map { String(cString: $0) } ?? "?"
        path = lib.shownPath
    }

    /// The system libcrypto (or the file `SANAD_LIBCRYPTO` names), or why it cannot be used.
    public static func load() -> Result<LibCrypto, NativeLibraryError> {
        NativeLibrary.load(spec) { lib in
            Result { try LibCrypto(lib) }.mapError { NativeLibraryError("\($0)") }
        }
    }

    /// `load()` as a throwing call, with the library's own message.
    public static func shared() throws -> LibCrypto {
        switch load() {
        case .success(let lib): return lib
        case .failure(let error): throw SigningError.native(error.reason)
        }
    }

    // MARK: Operations

    /// `count` random bytes from OpenSSL's CSPRNG.
    public func random(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard randomBytes(&bytes, Int32(count)) == 1 else { throw SigningError.native("RAND_bytes failed") }
        return bytes
    }

    /// The 32-byte Ed25519 public key of a 32-byte private key (seed).
    public func publicKey(privateKey: [UInt8]) throws -> [UInt8] {
        let key = try privateKeyHandle(privateKey)
        defer { pkeyFree(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard getRawPublicKey(key, &out, &length) == 1, length == 32 else {
            throw SigningError.native("EVP_PKEY_get_raw_public_key failed")
        }
        return out
    }

    /// The 64-byte Ed25519 signature of `message`.
    public func sign(_ message: [UInt8], privateKey: [UInt8]) throws -> [UInt8] {
        let key = try privateKeyHandle(privateKey)
        defer { pkeyFree(key) }
        guard let context = mdContextNew() else { throw SigningError.native("EVP_MD_CTX_new failed") }
        defer { mdContextFree(context) }
        guard digestSignInit(context, nil, nil, nil, key) == 1 else {
            throw SigningError.native("EVP_DigestSignInit failed for an Ed25519 key")
        }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        guard digestSign(context, &signature, &length, message, message.count) == 1, length == 64 else {
            throw SigningError.native("EVP_DigestSign failed")
        }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by `publicKey`.
    public func verify(_ message: [UInt8], signature: [UInt8], publicKey: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64,
            let key = newRawPublicKey(Self.ed25519, nil, publicKey, 32)
        else { return false }
        defer { pkeyFree(key) }
        guard let context = mdContextNew() else { return false }
        defer { mdContextFree(context) }
        guard digestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return digestVerify(context, signature, 64, message, message.count) == 1
    }

    private func privateKeyHandle(_ privateKey: [UInt8]) throws -> OpaquePointer {
        guard privateKey.count == 32, let key = newRawPrivateKey(Self.ed25519, nil, privateKey, 32) else {
            throw SigningError.native("not an Ed25519 private key (32 bytes expected)")
        }
        return key
    }
}

/// A streaming SHA-256 (libcrypto's EVP digest): input messages, model files, token ids.
public final class SHA256Digest {
    private let lib: LibCrypto
    private let context: OpaquePointer

    public init(_ lib: LibCrypto) throws {
        self.lib = lib
        guard let context = lib.mdContextNew() else { throw SigningError.native("EVP_MD_CTX_new failed") }
        guard lib.digestInit(context, lib.sha256Method(), nil) == 1 else {
            lib.mdContextFree(context)
            throw SigningError.native("EVP_DigestInit_ex(SHA-256) failed")
        }
        self.context = context
    }

    deinit { lib.mdContextFree(context) }

    public func update(_ bytes: [UInt8]) throws {
        guard lib.digestUpdate(context, bytes, bytes.count) == 1 else {
            throw SigningError.native("EVP_DigestUpdate failed")
        }
    }

    public func update(_ pointer: UnsafeRawPointer, count: Int) throws {
        guard lib.digestUpdate(context, pointer, count) == 1 else {
            throw SigningError.native("EVP_DigestUpdate failed")
        }
    }

    /// The digest as lower-case hex (the digest cannot be updated afterwards).
    public func hex() throws -> String {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        guard lib.digestFinal(context, &out, &length) == 1 else {
            throw SigningError.native("EVP_DigestFinal_ex failed")
        }
        return Hex.encode(out)
    }

    /// SHA-256 of bytes.
    public static func hex(_ bytes: [UInt8], lib: LibCrypto) throws -> String {
        let digest = try SHA256Digest(lib)
        try digest.update(bytes)
        return try digest.hex()
    }

    /// SHA-256 of a (large) file, read 1 MiB at a time: a model's weights.
    public static func hex(file: URL, lib: LibCrypto) throws -> String {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            throw SigningError.io("cannot read \(file.path)")
        }
        defer { try? handle.close() }
        let digest = try SHA256Digest(lib)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            try chunk.withUnsafeBytes { raw in
                if let base = raw.baseAddress { try digest.update(base, count: raw.count) }
            }
        }
        return try digest.hex()
    }
}

/// Lower-case hexadecimal (SanadArchive's `hexString` and `bytes(fromHex:)`, under the names this module's callers use).
public enum Hex {
    public static func encode(_ bytes: [UInt8]) -> String { hexString(bytes) }

    /// The bytes of an even-length lower-case hex string, or nil (upper case is refused: one text per value).
    public static func decode(_ text: String) -> [UInt8]? { bytes(fromHex: text) }
}
