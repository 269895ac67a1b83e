import Foundation
import SanadArchive
import SanadCore

/// A backup of form sessions as a ZIP archive anyone can open: the sessions (each a checked session backup, so the
/// archive restores into either store), the documents made from them (answers, form, checklist), the templates they
/// follow, and `manifest.json` with the SHA-256 and size of every other file and the store's schema version.
/// Restore checks the archive, the manifest, every file's digest and every session before it writes anything.
public enum FormsArchive {
    public static let format = "sanad-forms-archive"
    public static let formatVersion = 1
    public static let manifestPath = "manifest.json"

    /// The archive of `records`, with the templates folder of `catalog`.
    public static func make(
        _ records: [SessionRecord], catalog: FormCatalog, store: any FormStore, today: CivilDate, now: Date
    ) throws -> [UInt8] {
        var files: [ZipEntry] = []
        for record in records {
            if let problem = SessionID.problem(record.id) {
                throw FormError.store(
                    "not backed up, nothing written: \(problem) (a session saved before this rule; back up the "
                        + "others one by one, or wipe the store with 'sanad form privacy --wipe')")
            }
            let template = try catalog.template(record.templateID)
            let session = FormSession(template: template, record: record, store: store, today: today, now: { now })
            files.append(
                ZipEntry(path: "sessions/\(record.id).json", bytes: Array(SessionBackup.make(record, now: now).utf8)))
            for (name, bytes) in FormDocuments(session).files {
                files.append(ZipEntry(path: "documents/\(record.id)/\(name)", bytes: bytes))
            }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: catalog.directory.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: catalog.directory.appendingPathComponent(name).path)
            else { throw FormError.store("\(catalog.directory.appendingPathComponent(name).path): cannot be read") }
            files.append(ZipEntry(path: "templates/\(name)", bytes: Array(data)))
        }
        let manifest = JSONValue.object([
            "format": .string(format), "formatVersion": .number(Double(formatVersion)),
            "storeSchemaVersion": .number(Double(SQLiteFormStore.schemaVersion)),
            "createdAt": .string(FormStores.timestamp(now)), "sessions": .array(records.map { .string($0.id) }),
            "files": .array(
                files.map {
                    .object([
                        "path": .string($0.path), "bytes": .number(Double($0.bytes.count)),
                        "sha256": .string(sha256Hex($0.bytes)),
                    ])
                }),
        ])
        do {
            return try ZipArchive.write(
                [ZipEntry(path: manifestPath, bytes: Array((manifest.prettyString + "\n").utf8))] + files, modified: now
            )
        } catch { throw FormError.store("the backup cannot be written: \(error)") }
    }

    /// True when `bytes` start like a ZIP archive (a session backup of format 1 is JSON).
    public static func isArchive(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) }

    /// What a restore would write: one checked plan per session, and the archive's other files for a listing.
    public struct Plan: Sendable {
        public var sessions: [SessionBackup.Plan]
        public var files: [(path: String, bytes: Int)]

        public init(sessions: [SessionBackup.Plan], files: [(path: String, bytes: Int)]) {
            self.sessions = sessions
            self.files = files
        }
    }

    /// Reads and checks an archive: every entry's CRC, the manifest against the files (none missing, none extra,
    /// every SHA-256 equal), the schema version, and each session as `SessionBackup.plan` checks it.
    public static func plan(
        _ bytes: [UInt8], file: String, catalog: FormCatalog, store: any FormStore, today: CivilDate
    ) throws -> Plan {
        func bad(_ problem: String) -> FormError { .invalidBackup(file: file, problem: problem) }
        let entries: [ZipEntry]
        do { entries = try ZipArchive.read(bytes) } catch { throw bad("\(error)") }
        guard let manifestEntry = entries.first(where: { $0.path == manifestPath }) else {
            throw bad("no \(manifestPath): not a Sanad forms archive")
        }
        let manifest: JSONValue
        do { manifest = try StrictJSON(maximumBytes: 16 << 20).parse(manifestEntry.bytes) } catch {
            throw bad("\(manifestPath): \(error)")
        }
        guard let m = manifest.objectValue, m["format"]?.stringValue == format else {
            throw bad("\(manifestPath): not a Sanad forms archive (format '\(format)')")
        }
        guard let version = m["formatVersion"]?.intValue, version <= formatVersion else {
            throw bad("archive format \(m["formatVersion"] ?? .null) is newer than this sanad reads (\(formatVersion))")
        }
        guard let schema = m["storeSchemaVersion"]?.intValue, schema <= SQLiteFormStore.schemaVersion else {
            throw bad("store schema \(m["storeSchemaVersion"] ?? .null) is newer than this sanad reads")
        }
        guard let listed = m["files"]?.arrayValue, let sessionIDs = m["sessions"]?.arrayValue?.compactMap(\.stringValue)
        else { throw bad("\(manifestPath): missing 'files' or 'sessions'") }
        var digests: [String: String] = [:]
        for (i, f) in listed.enumerated() {
            guard let path = f.objectValue?["path"]?.stringValue, let sum = f.objectValue?["sha256"]?.stringValue else {
                throw bad("\(manifestPath): files[\(i)] needs 'path' and 'sha256'")
            }
            digests[path] = sum
        }
        let contents = entries.filter { $0.path != manifestPath }
        for entry in contents {
            guard let sum = digests[entry.path] else {
                throw bad("\(entry.path) is not in the manifest: the archive was changed")
            }
            guard sha256Hex(entry.bytes) == sum else {
                throw bad("\(entry.path): the SHA-256 does not match the manifest: the file was changed or damaged")
            }
        }
        for path in digests.keys.sorted() where !contents.contains(where: { $0.path == path }) {
            throw bad("\(path) is in the manifest but not in the archive: it is incomplete")
        }
        var plans: [SessionBackup.Plan] = []
        for id in sessionIDs {
            if let problem = SessionID.problem(id) {
                throw bad("the manifest lists a session id that is refused: \(problem)")
            }
            let path = "sessions/\(id).json"
            guard let entry = contents.first(where: { $0.path == path }) else { throw bad("\(path) is missing") }
            let plan = try SessionBackup.plan(
                entry.bytes, file: "\(file): \(path)", catalog: catalog, store: store, today: today)
            guard plan.record.id == id else {
                throw bad("\(path) holds session \(TerminalText.quoted(plan.record.id))")
            }
            plans.append(plan)
        }
        return Plan(sessions: plans, files: contents.map { ($0.path, $0.bytes.count) })
    }

    /// Writes every checked session, each in its own transaction; returns the ids written. A failure part way
    /// (a full disk) names what was restored and what was not.
    public static func restore(_ plan: Plan, into store: any FormStore) throws -> [String] {
        var done: [String] = []
        for p in plan.sessions {
            do { try SessionBackup.restore(p, into: store) } catch {
                throw FormError.store(
                    "restoring session \(p.record.id) failed (\(error)); restored before it: "
                        + (done.isEmpty ? "none" : done.joined(separator: ", ")))
            }
            done.append(p.record.id)
        }
        return done
    }
}
