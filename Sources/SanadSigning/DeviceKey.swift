import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The device's Ed25519 signing key: a 32-byte seed in `<dir>/device-key.hex` (owner-only: the folder 0700, the
/// file 0600), created on first use from OpenSSL's random generator. One key signs everything the device signs
/// (credit records, generation receipts). The folder is `SANAD_CREDIT_KEYS`, else `<data>/credit-scoring/keys`:
/// where the credit plugin first created it, so keys registered with a credit server stay valid (README.md).
public struct DeviceKey: Sendable {
    public let privateKey: [UInt8]
    public let publicKey: [UInt8]
    /// The first 16 hex digits of SHA-256(public key): how records and the server name the key.
    public let keyID: String
    public let file: URL

    public static let fileName = "device-key.hex"

    /// Loads the key in `directory`, creating it (and the folder) when there is none.
    public static func loadOrCreate(directory: URL, lib: LibCrypto) throws -> DeviceKey {
        let file = directory.appendingPathComponent(fileName)
        if FileManager.default.fileExists(atPath: file.path) { return try load(file: file, lib: lib) }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SigningError.io("cannot create the key folder \(directory.path): \(error.localizedDescription)")
        }
        let seed = try lib.random(32)
        do {
            try writeOwnerOnly(file, Array((Hex.encode(seed) + "\n").utf8), exclusive: true)
        } catch SigningError.io(_) where FileManager.default.fileExists(atPath: file.path) {
            return try load(file: file, lib: lib)  // another process made it first
        }
        return try DeviceKey(privateKey: seed, file: file, lib: lib)
    }

    /// Loads an existing key; a key readable by others is refused.
    public static func load(file: URL, lib: LibCrypto) throws -> DeviceKey {
        var info = stat()
        guard stat(file.path, &info) == 0 else { throw SigningError.io("cannot read the device key \(file.path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw SigningError.io(
                "the device key \(file.path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "fix: chmod 600 \(file.path)")
        }
        guard let data = FileManager.default.contents(atPath: file.path),
            let seed = Hex.decode(
                String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            seed.count == 32
        else { throw SigningError.io("\(file.path) is not a device key (64 lower-case hex digits)") }
        return try DeviceKey(privateKey: seed, file: file, lib: lib)
    }

    /// The public keys this device signed with before (`rotate`): `retired-keys.txt` in the key folder, one line
    /// each, `PUBLICKEY KEYID retired YYYY-MM-DDTHH:MM:SSZ` (a verifier's trusted keys file takes such lines).
    public static let retiredFileName = "retired-keys.txt"

    /// The lines of `retired-keys.txt` in `directory` (none when there is no such file).
    public static func retiredKeys(directory: URL) -> [String] {
        let file = directory.appendingPathComponent(retiredFileName)
        guard let data = FileManager.default.contents(atPath: file.path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    /// Replaces the device key in `directory` by a new one: the old public key is appended to `retired-keys.txt`
    /// first (so documents it signed still verify against a trusted list that holds it), then the new seed replaces
    /// the old file in one rename; the old private key is gone. `retiredAt` is the line's time
    /// (`YYYY-MM-DDTHH:MM:SSZ`).
    public static func rotate(directory: URL, retiredAt: String, lib: LibCrypto) throws
        -> (retired: DeviceKey, current: DeviceKey)
    {
        let old = try loadOrCreate(directory: directory, lib: lib)
        let seed = try lib.random(32)
        let staged = directory.appendingPathComponent(fileName + ".new")
        unlink(staged.path)
        try writeOwnerOnly(staged, Array((Hex.encode(seed) + "\n").utf8), exclusive: true)
        let retired = directory.appendingPathComponent(retiredFileName)
        var lines = retiredKeys(directory: directory)
        lines.append("\(Hex.encode(old.publicKey)) \(old.keyID) retired \(retiredAt)")
        try writeOwnerOnly(retired, Array((lines.joined(separator: "\n") + "\n").utf8), exclusive: false)
        guard rename(staged.path, old.file.path) == 0 else {
            throw SigningError.io(
                "cannot replace \(old.file.path) with the new key: \(String(cString: strerror(errno)))")
        }
        return (old, try DeviceKey(privateKey: seed, file: old.file, lib: lib))
    }

    /// Writes `bytes` to a 0600 file and syncs it (`exclusive`: it must not exist yet).
    static func writeOwnerOnly(_ file: URL, _ bytes: [UInt8], exclusive: Bool) throws {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | (exclusive ? O_EXCL : 0), 0o600)
        guard fd >= 0 else { throw SigningError.io("cannot create \(file.path): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0 else { throw SigningError.io("cannot write \(file.path)") }
    }

    init(privateKey: [UInt8], file: URL, lib: LibCrypto) throws {
        self.privateKey = privateKey
        self.file = file
        publicKey = try lib.publicKey(privateKey: privateKey)
        keyID = String(try SHA256Digest.hex(publicKey, lib: lib).prefix(16))
    }

    /// The plugin data folder id whose `keys/` holds the device key (`homeDirectory(pluginData:)`).
    public static let homeDataFolderID = "credit-scoring"

    /// The key folder: `SANAD_CREDIT_KEYS`, else `dataDirectory/keys`.
    public static func directory(
        dataDirectory: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> URL
    {
        if let dir = environment["SANAD_CREDIT_KEYS"], !dir.isEmpty { return URL(fileURLWithPath: dir) }
        return dataDirectory.appendingPathComponent("keys")
    }
}
