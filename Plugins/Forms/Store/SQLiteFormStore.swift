import Foundation
import SanadNative

/// Sessions in an SQLite database (WAL journal, `synchronous=FULL`, one transaction per write): an answer is on
/// disk when `save` returns, so a process killed at any instant after that keeps it.
public final class SQLiteFormStore: FormStore {
    /// The schema this build writes, stored in `PRAGMA user_version`. A newer one is refused.
    public static let schemaVersion: Int64 = 1
    let db: SQLiteDatabase
    public let location: String

    public init(library: SQLiteLibrary, file: URL) throws {
        db = try SQLiteDatabase(lib: library, file: file.path) { FormError.store($0) }
        location = "SQLite \(library.version), \(file.path) (WAL)"
        let version: Int64
        do {
            let mode = try db.run("PRAGMA journal_mode=WAL").first?.first?.text ?? ""
            guard mode.lowercased() == "wal" else {
                throw FormError.store("\(file.path): cannot switch to WAL journaling (got '\(mode)')")
            }
            try db.run("PRAGMA synchronous=FULL")
            version = try db.run("PRAGMA user_version", integerColumns: [0]).first?.first?.int ?? 0
        } catch let error as FormError {
            throw FormError.store(
                "\(error). Check the free space and file-size limits; if the file is damaged, restore a backup "
                    + "('sanad form restore') into a new store folder")
        }
        if version > Self.schemaVersion {
            throw FormError.store(
                "\(file.path) has form store schema \(version); this sanad reads schema \(Self.schemaVersion) at most. "
                    + "Use a newer sanad, or another store folder (--store)")
        }
        if version < Self.schemaVersion {
            try db.transaction {
                try db.run(
                    """
                    CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, template_id TEXT NOT NULL,
                      template_version TEXT NOT NULL, language TEXT NOT NULL, created_at TEXT NOT NULL)
                    """)
                try db.run(
                    """
                    CREATE TABLE IF NOT EXISTS answers(session_id TEXT NOT NULL REFERENCES sessions(id),
                      field_id TEXT NOT NULL, value TEXT NOT NULL, source TEXT NOT NULL, detail TEXT NOT NULL,
                      sequence INTEGER NOT NULL, saved_at TEXT NOT NULL, PRIMARY KEY(session_id, field_id))
                    """)
                try db.run("PRAGMA user_version=\(Self.schemaVersion)")
            }
        }
    }

    public func sessions() throws -> [SessionRecord] {
        try db.run("SELECT id FROM sessions ORDER BY created_at, id").compactMap { try load($0[0].text) }
    }

    public func session(_ id: String) throws -> SessionRecord? {
        try SessionID.validate(id)
        return try load(id)
    }

    /// The session stored under `id`, whatever the id (listing and wiping reach sessions saved before the id rule).
    private func load(_ id: String) throws -> SessionRecord? {
        guard
            let row = try db.run(
                "SELECT id, template_id, template_version, language, created_at FROM sessions WHERE id = ?",
                [.text(id)]
            ).first
        else { return nil }
        let answers = try db.run(
            "SELECT field_id, value, source, detail, sequence, saved_at FROM answers WHERE session_id = ? ORDER BY sequence",
            [.text(id)], integerColumns: [4]
        ).map { r in
            StoredAnswer(
                fieldID: r[0].text, value: r[1].text, source: AnswerSource(rawValue: r[2].text) ?? .typed,
                detail: r[3].text, sequence: Int(r[4].int), savedAt: r[5].text)
        }
        return SessionRecord(
            id: row[0].text, templateID: row[1].text, templateVersion: row[2].text, language: row[3].text,
            createdAt: row[4].text, answers: answers)
    }

    func insert(_ s: SessionRecord) throws {
        try db.run(
            "INSERT INTO sessions(id, template_id, template_version, language, created_at) VALUES(?, ?, ?, ?, ?)",
            [.text(s.id), .text(s.templateID), .text(s.templateVersion), .text(s.language), .text(s.createdAt)])
        for a in s.answers { try upsert(a, session: s.id) }
    }

    func upsert(_ a: StoredAnswer, session id: String) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO answers(session_id, field_id, value, source, detail, sequence, saved_at)
            VALUES(?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(id), .text(a.fieldID), .text(a.value), .text(a.source.rawValue), .text(a.detail),
                .int(Int64(a.sequence)), .text(a.savedAt),
            ])
    }

    public func create(_ session: SessionRecord) throws {
        try SessionID.validate(session.id)
        try db.transaction {
            guard try db.run("SELECT 1 FROM sessions WHERE id = ?", [.text(session.id)]).isEmpty else {
                throw FormError.invalidRequest("a form session '\(session.id)' already exists in \(location)")
            }
            try insert(session)
        }
    }

    public func save(_ answer: StoredAnswer, session id: String) throws {
        try SessionID.validate(id)
        try db.transaction {
            guard !(try db.run("SELECT 1 FROM sessions WHERE id = ?", [.text(id)]).isEmpty) else {
                throw FormError.unknownSession(id: id, store: location)
            }
            try upsert(answer, session: id)
        }
    }

    public func remove(field: String, session id: String) throws {
        try SessionID.validate(id)
        try db.transaction {
            try db.run("DELETE FROM answers WHERE session_id = ? AND field_id = ?", [.text(id), .text(field)])
        }
    }

    public func replace(_ session: SessionRecord) throws {
        try SessionID.validate(session.id)
        try db.transaction {
            try db.run("DELETE FROM answers WHERE session_id = ?", [.text(session.id)])
            try db.run("DELETE FROM sessions WHERE id = ?", [.text(session.id)])
            try insert(session)
        }
    }

    public func delete(session id: String) throws {
        try db.transaction {
            try db.run("DELETE FROM answers WHERE session_id = ?", [.text(id)])
            try db.run("DELETE FROM sessions WHERE id = ?", [.text(id)])
        }
    }
}
