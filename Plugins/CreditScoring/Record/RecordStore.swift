import Foundation
import SanadCore

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

    /// The person's consent to analyse (`Consent`).
    public var consent: URL { directory.appendingPathComponent("consent.json") }

    /// Records the server refused: `<data>/rejected/<recordId>.json`.
    public var rejected: URL { directory.appendingPathComponent("rejected") }

    /// Erases every file the plugin wrote in the store: records, confirmations, the outbox, rejected records,
    /// background jobs with their checkpoints, the event log, the consent and the device key (a later analysis makes a new
    /// one); folders it made are removed when empty. Returns how many records, confirmations and outbox entries
    /// went (the figure `privacy` reports).
    public func eraseAll() throws -> Int {
        var removed = 0
        for folder in [records, outbox, confirmations, rejected] {
            for file in files(in: folder) {
                try FileManager.default.removeItem(at: file)
                removed += 1
            }
        }
        for folder in [jobs, keys] where FileManager.default.fileExists(atPath: folder.path) {
            try FileManager.default.removeItem(at: folder)
        }
        try? FileManager.default.removeItem(at: events)
        try? FileManager.default.removeItem(at: consent)
        for folder in [records, outbox, confirmations, rejected, directory] {
            if (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true {
                try? FileManager.default.removeItem(at: folder)
            }
        }
        return removed
    }

    /// Background jobs' state and checkpoints (`sanad credit analyze --background`).
    public var jobs: URL { directory.appendingPathComponent("jobs") }
    /// The device key's folder when it lives in the store (`DeviceKey.directory`).
    public var keys: URL { directory.appendingPathComponent("keys") }

    /// What happened when records were sent, one JSON object per line (`time`, `kind`: confirmed, rejected or
    /// unreachable, and record ids, digests, reasons, round-trip milliseconds — never content): the debug status's
    /// last errors and confirmations.
    public var events: URL { directory.appendingPathComponent("events.jsonl") }

    /// Appends `event` with the time to the event log (best effort: a log that cannot be written loses nothing
    /// else).
    public func log(_ event: [String: JSONValue], at time: Date = Date()) {
        var line = event
        line["time"] = .string(ISO8601DateFormatter().string(from: time))
        guard let data = (JSONValue.object(line).jsonString + "\n").data(using: .utf8) else { return }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let handle = try? FileHandle(forWritingTo: events) {
            defer { try? handle.close() }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: data)
        } else {
            try? data.write(to: events)
        }
    }

    /// The last `count` events, oldest first.
    public func recentEvents(_ count: Int) -> [JSONValue] {
        guard let text = try? String(contentsOf: events, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").suffix(count).compactMap { try? JSONValue.parse(String($0)) }
    }
}
