import Foundation
import SanadArchive

/// The key of the keyed digest (HMAC-SHA-256) in form backups: 32 random bytes, as hex, in `backup.key` in the store
/// folder (mode 0600), made on first use. A forger who edits an archive and recomputes its plain SHA-256 digests
/// cannot recompute the keyed one; a backup made on another device restores with that device's key file (`--key`).
public struct BackupKey: Sendable, Equatable {
    public static let fileName = "backup.key"
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Names the key without revealing it: the first 16 hex digits of the SHA-256 of its bytes.
    public var id: String { String(sha256Hex(bytes).prefix(16)) }

    /// The keyed digest of `message`, as hex.
    public func digest(_ message: [UInt8]) -> String { hexString(hmacSHA256(key: bytes, message: message)) }

    /// Reads a key file (64 hex digits and an optional newline); the error names the file and what is wrong.
    public static func load(file: URL) throws -> BackupKey {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw FormError.store("\(file.path): the backup key cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 64, let bytes = SanadArchive.bytes(fromHex: text) else {
            throw FormError.store("\(file.path): not a backup key (expected 64 hex digits, as 'sanad form' writes)")
        }
        return BackupKey(bytes: bytes)
    }

    /// The store folder's key, made (32 bytes from the system's random source, mode 0600) when there is none yet.
    /// Two processes starting at once end up with the same key: the file is linked into place only if absent.
    public static func loadOrCreate(directory: URL) throws -> BackupKey {
        let file = directory.appendingPathComponent(fileName)
        if FileManager.default.fileExists(atPath: file.path) { return try load(file: file) }
        var generator = SystemRandomNumberGenerator()
        let key = BackupKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let temporary = directory.appendingPathComponent(".\(fileName).\(getpid())")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: Data((hexString(key.bytes) + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw FormError.store("\(directory.path): the backup key cannot be written") }
        defer { unlink(temporary.path) }
        if link(temporary.path, file.path) != 0 && errno != EEXIST {
            throw FormError.store("\(file.path): the backup key cannot be written (errno \(errno))")
        }
        return try load(file: file)
    }
}

/// Which backups a restore accepts: archives whose keyed digest one of `keys` made (the store's own key first),
/// and, only when `allowUnkeyed` (the person says they made it), archives and session files without one.
public struct BackupTrust: Sendable {
    public var keys: [BackupKey]
    public var allowUnkeyed: Bool

    public init(keys: [BackupKey], allowUnkeyed: Bool = false) {
        self.keys = keys
        self.allowUnkeyed = allowUnkeyed
    }
}
