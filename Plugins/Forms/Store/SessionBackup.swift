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
        /// True when a session with the same id is in the store (restoring replaces it).
        public var replaces: Bool
        public var summary: String
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
        let replaces = try store.session(record.id) != nil
        let summary =
            "session \(record.id): \(record.templateID) \(record.templateVersion), \(record.language), "
            + "\(record.answers.count) answers\(replaces ? " (replaces the session of that id in the store)" : "")"
        return Plan(record: record, replaces: replaces, summary: summary)
    }

    /// Writes a checked plan in one transaction.
    public static func restore(_ plan: Plan, into store: any FormStore) throws { try store.replace(plan.record) }
}
