import Foundation
import SanadArchive
import SanadCore

/// A backup of form sessions as a ZIP archive anyone can open: the sessions (each a checked session backup, so the
/// archive restores into either store), the documents made from them (answers, form, checklist), the templates they
/// follow, `manifest.json` with the SHA-256 and size of every other file and the store's schema version, and
/// `manifest.hmac`: the manifest's keyed digest (HMAC-SHA-256 with the store's `BackupKey`, named by its id).
/// Restore checks the archive, the keyed digest, the manifest, every file's digest and every session before it
/// writes anything.
public enum FormsArchive {
    public static let format = "sanad-forms-archive"
    /// 2 added `manifest.hmac`.
    public static let formatVersion = 2
    public static let manifestPath = "manifest.json"
    public static let keyedDigestPath = "manifest.hmac"

    /// The archive of `records`, with the templates folder of `catalog`, its manifest digested with `key`.
    public static func make(
        _ records: [SessionRecord], catalog: FormCatalog, store: any FormStore, today: CivilDate, now: Date,
        key: BackupKey
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
        let manifestBytes = Array((manifest.prettyString + "\n").utf8)
        let keyed = JSONValue.object([
            "algorithm": .string("HMAC-SHA256"), "keyId": .string(key.id), "digest": .string(key.digest(manifestBytes)),
        ])
        do {
            return try ZipArchive.write(
                [
                    ZipEntry(path: manifestPath, bytes: manifestBytes),
                    ZipEntry(path: keyedDigestPath, bytes: Array((keyed.prettyString + "\n").utf8)),
                ] + files, modified: now)
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

    /// Reads and checks an archive: every entry's CRC, the manifest's keyed digest against `trust`, the manifest
    /// against the files (none missing, none extra, every SHA-256 equal), the schema version, and each session as
    /// `SessionBackup.plan` checks it.
    public static func plan(
        _ bytes: [UInt8], file: String, catalog: FormCatalog, store: any FormStore, today: CivilDate,
        trust: BackupTrust
    ) throws -> Plan {
        func bad(_ problem: String) -> FormError { .invalidBackup(file: file, problem: problem) }
        let entries: [ZipEntry]
        do { entries = try ZipArchive.read(bytes) } catch { throw bad("\(error)") }
        guard let manifestEntry = entries.first(where: { $0.path == manifestPath }) else {
            throw bad("no \(manifestPath): not a Sanad forms archive")
        }
        try checkKeyedDigest(
            of: manifestEntry.bytes, entry: entries.first(where: { $0.path == keyedDigestPath }), trust: trust,
            bad: bad)
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
        let contents = entries.filter { $0.path != manifestPath && $0.path != keyedDigestPath }
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

    /// Checks `manifest`'s keyed digest (the `manifest.hmac` entry) with the keys `trust` holds; an archive without
    /// one is accepted only when `trust.allowUnkeyed`.
    static func checkKeyedDigest(
        of manifest: [UInt8], entry: ZipEntry?, trust: BackupTrust, bad: (String) -> FormError
    ) throws {
        guard let entry else {
            guard trust.allowUnkeyed else {
                throw bad(
                    "it has no keyed digest (\(keyedDigestPath)): an archive of an earlier version, or one whose "
                        + "digest was removed; if you made it yourself, restore it with --allow-unkeyed")
            }
            return
        }
        let keyed: [String: JSONValue]
        do {
            guard let o = try StrictJSON(maximumBytes: 4096).parse(entry.bytes).objectValue else {
                throw bad("\(keyedDigestPath): expected a JSON object")
            }
            keyed = o
        } catch let error as FormError { throw error } catch { throw bad("\(keyedDigestPath): \(error)") }
        guard keyed["algorithm"]?.stringValue == "HMAC-SHA256", let keyID = keyed["keyId"]?.stringValue,
            let digest = keyed["digest"]?.stringValue.flatMap({ bytes(fromHex: $0) })
        else { throw bad("\(keyedDigestPath): expected algorithm HMAC-SHA256, keyId and a hex digest") }
        guard let key = trust.keys.first(where: { $0.id == keyID }) else {
            throw bad(
                "it was made with backup key \(keyID), and this store's key is "
                    + "\(trust.keys.first?.id ?? "none"): restore it with --key FILE (the \(BackupKey.fileName) of the "
                    + "store that made it)")
        }
        guard digestsEqual(hmacSHA256(key: key.bytes, message: manifest), digest) else {
            throw bad(
                "the keyed digest (HMAC-SHA256, key \(keyID)) does not match \(manifestPath): the archive was changed "
                    + "by someone without the key")
        }
    }

    /// Writes the checked sessions the merge rules let through (`SessionBackup.Plan.decision`), each in its own
    /// transaction; returns every session's decision. A failure part way (a full disk) names what was restored and
    /// what was not.
    public static func restore(_ plan: Plan, into store: any FormStore, replacing: Bool = false) throws -> [(
        id: String, decision: RestoreDecision
    )] {
        var done: [(id: String, decision: RestoreDecision)] = []
        for p in plan.sessions {
            let decision = p.decision(replacing: replacing)
            guard decision.writes else {
                done.append((p.record.id, decision))
                continue
            }
            do { try SessionBackup.restore(p, into: store) } catch {
                throw FormError.store(
                    "restoring session \(p.record.id) failed (\(error)); restored before it: "
                        + (done.contains { $0.decision.writes }
                            ? done.filter(\.decision.writes).map(\.id).joined(separator: ", ") : "none"))
            }
            done.append((p.record.id, decision))
        }
        return done
    }
}
