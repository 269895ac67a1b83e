import Foundation

/// The device's own signed records: `<data>/records/<recordId>.json` (canonical bytes, owner-only), and the
/// outbox of records not yet confirmed by the server: `<data>/outbox/<recordId>.json`. No input message is ever
/// written here.
public struct RecordStore: Sendable {
    public let directory: URL
    public var records: URL { directory.appendingPathComponent("records") }
    public var outbox: URL { directory.appendingPathComponent("outbox") }
    /// Server confirmations: `<data>/confirmations/<recordId>.json`.
    public var confirmations: URL { directory.appendingPathComponent("confirmations") }

    public init(directory: URL) { self.directory = directory }

    /// Writes `bytes` as `<folder>/<recordId>.json`, atomically, mode 0600.
    @discardableResult
    public func save(_ bytes: [UInt8], recordID: String, in folder: URL) throws -> URL {
        guard !recordID.isEmpty, recordID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw CreditError.record("record id '\(recordID)' is not letters, digits and '-'")
        }
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let file = folder.appendingPathComponent("\(recordID).json")
            try Data(bytes + [10]).write(to: file, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            return file
        } catch {
            throw CreditError.io("cannot write to \(folder.path): \(error.localizedDescription)")
        }
    }

    /// The files of a folder, oldest name first (record ids start with the creation time, so this is time order).
    public func files(in folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { folder.appendingPathComponent($0) }
    }

    public func remove(recordID: String, from folder: URL) {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("\(recordID).json"))
    }

    /// Records the server refused: `<data>/rejected/<recordId>.json`.
    public var rejected: URL { directory.appendingPathComponent("rejected") }

    /// Erases every local record, confirmation, outbox and rejected entry (the device key stays).
    public func eraseAll() throws -> Int {
        var removed = 0
        for folder in [records, outbox, confirmations, rejected] {
            for file in files(in: folder) {
                try FileManager.default.removeItem(at: file)
                removed += 1
            }
        }
        return removed
    }
}
