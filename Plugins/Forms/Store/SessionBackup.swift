import Foundation
import SanadArchive
import SanadCore

/// A session backup file: the session and its answers, the template it follows, the store schema, and the
/// SHA-256 of the session's JSON. Restore checks all of it before touching the store.
public enum SessionBackup {
    public static let format = "sanad-form-backup"
    public static let formatVersion = 1

    /// The SHA-256 of `text`'s UTF-8, in hex.
    public static func checksum(_ text: String) -> String { sha256Hex(Array(text.utf8)) }

    /// The backup of `record` as JSON text.
    public static func make(_ record: SessionRecord, now: Date) -> String {
        let session = record.json
        return JSONValue.object([
            "format": .string(format), "formatVersion": .number(Double(formatVersion)),
            "storeSchemaVersion": .number(Double(SQLiteFormStore.schemaVersion)),
            "createdAt": .string(FormStores.timestamp(now)), "templateId": .string(record.templateID),
            "templateVersion": .string(record.templateVersion),
            "sha256": .string(sha256Hex(Array(session.jsonString.utf8))), "session": session,
        ]).prettyString + "\n"
    }

    /// What a restore would write, after every check; nothing is written here.
    public struct Plan: Sendable {
        public var record: SessionRecord
        /// The session of the same id in the store, if any.
        public var existing: SessionRecord?
        public var summary: String

        /// True when a session with the same id is in the store.
        public var replaces: Bool { existing != nil }

        /// What restoring does with this session: a session the store lacks is added; of two versions the newer
        /// by its last acknowledged answer wins (the store's on a tie), unless `replacing` (`--replace`).
        public func decision(replacing: Bool) -> RestoreDecision {
            guard let existing else { return .add }
            if existing == record { return .unchanged }
            let (kept, backup) = (existing.lastAcknowledged, record.lastAcknowledged)
            if replacing { return .replace(store: kept, backup: backup) }
            return backup > kept ? .update(store: kept, backup: backup) : .keepStore(store: kept, backup: backup)
        }
    }

    /// Reads and checks a backup: format, checksum, template and version, every answer against its field. Throws
    /// `FormError.invalidBackup` naming the problem.
    public static func plan(
        _ bytes: [UInt8], file: String, catalog: FormCatalog, store: any FormStore, today: CivilDate
    ) throws -> Plan {
        func bad(_ problem: String) -> FormError { .invalidBackup(file: file, problem: problem) }
        let root: JSONValue
        do { root = try StrictJSON(maximumBytes: 64 << 20).parse(bytes) } catch {
            throw bad("not a complete JSON backup (\(error)); it may be truncated")
        }
        let keys = [
            "format", "formatVersion", "storeSchemaVersion", "createdAt", "templateId", "templateVersion", "sha256",
            "session",
        ]
        guard let o = root.objectValue else { throw bad("expected a JSON object") }
        for k in o.keys.sorted() where !keys.contains(k) { throw bad("unknown key '\(k)'") }
        guard o["format"]?.stringValue == format else { throw bad("not a Sanad form backup (format '\(format)')") }
        guard let version = o["formatVersion"]?.intValue, version <= formatVersion else {
            throw bad("backup format \(o["formatVersion"] ?? .null) is newer than this sanad reads (\(formatVersion))")
        }
        guard let schema = o["storeSchemaVersion"]?.intValue, schema <= SQLiteFormStore.schemaVersion else {
            throw bad("store schema \(o["storeSchemaVersion"] ?? .null) is newer than this sanad reads")
        }
        guard let session = o["session"], let sum = o["sha256"]?.stringValue else {
            throw bad("missing session or sha256")
        }
        guard sha256Hex(Array(session.jsonString.utf8)) == sum else {
            throw bad("the SHA-256 of the session does not match: the file was changed or damaged")
        }
        let record = try SessionRecord(json: session, path: "session") { path, problem in bad("\(path): \(problem)") }
        let template: FormTemplate
        do { template = try catalog.template(record.templateID) } catch { throw bad("\(error)") }
        guard template.metadata.version == record.templateVersion else {
            throw bad(
                "made with template \(record.templateID) \(record.templateVersion); this sanad has \(template.metadata.version)"
            )
        }
        let checker = FormSession(template: template, record: record, store: store, today: today, now: { Date() })
        for a in record.answers where !a.value.isEmpty {
            guard let field = template.field(a.fieldID) else { throw bad("answer for an unknown field '\(a.fieldID)'") }
            // Dates limited to past or future may have moved since; the rest must still be valid.
            if case .failure(let p) = checker.check(a.value, field: field), field.validation.date == nil {
                throw bad("answer '\(a.fieldID)' is not valid: \(p)")
            }
        }
        let summary =
            "session \(record.id): \(record.templateID) \(record.templateVersion), \(record.language), "
            + "\(record.answers.count) answers"
        return Plan(record: record, existing: try store.session(record.id), summary: summary)
    }

    /// Writes a checked plan in one transaction, whatever its decision.
    public static func restore(_ plan: Plan, into store: any FormStore) throws { try store.replace(plan.record) }
}

/// What a restore does with one session of a backup; times are the last acknowledged answers (ISO-8601, UTC).
public enum RestoreDecision: Sendable, Equatable {
    /// The store has no session of that id.
    case add
    /// The store's version is the same.
    case unchanged
    /// The backup's version is newer and replaces the store's.
    case update(store: String, backup: String)
    /// The store's version is newer (or as new) and is kept.
    case keepStore(store: String, backup: String)
    /// `--replace`: the backup's version replaces the store's, whichever is newer.
    case replace(store: String, backup: String)

    /// True when the session is written.
    public var writes: Bool {
        switch self {
        case .add, .update, .replace: return true
        case .unchanged, .keepStore: return false
        }
    }

    /// One line for the person: what happened and why.
    public var explanation: String {
        switch self {
        case .add: return "added (not in the store)"
        case .unchanged: return "unchanged (the store has the same version)"
        case .update(let store, let backup):
            return "updated: the backup's version is newer (last answer \(backup); the store's \(store))"
        case .keepStore(let store, let backup):
            return "kept the store's version: it is newer (last answer \(store); the backup's \(backup)); "
                + "--replace restores the backup's"
        case .replace(let store, let backup):
            return "replaced by the backup's version (--replace; last answer \(backup), the store's was \(store))"
        }
    }
}

extension SessionRecord {
    /// When the last answer was acknowledged (ISO-8601, UTC, so the text sorts by time); the session's creation
    /// when nothing is answered.
    public var lastAcknowledged: String { answers.map(\.savedAt).max() ?? createdAt }
}
