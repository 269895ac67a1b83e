import Foundation
import SanadNative

/// Where an answer came from: the person typed it, it was read from a document, or a model proposed it and the
/// person confirmed it.
public enum AnswerSource: String, Sendable, CaseIterable {
    case typed, document, modelConfirmed = "model-confirmed"
}

/// One saved answer with its evidence.
public struct StoredAnswer: Sendable, Equatable {
    public var fieldID: String
    /// The normal form (`yes`, `2026-01-31`, `CA`); empty for an optional field the person skipped.
    public var value: String
    public var source: AnswerSource
    /// The document and place, or the model's words; empty when typed.
    public var detail: String
    /// Order of answering within the session (1, 2, …); `back` reopens the highest.
    public var sequence: Int
    /// ISO-8601 time of saving.
    public var savedAt: String

    public init(fieldID: String, value: String, source: AnswerSource, detail: String, sequence: Int, savedAt: String) {
        self.fieldID = fieldID
        self.value = value
        self.source = source
        self.detail = detail
        self.sequence = sequence
        self.savedAt = savedAt
    }
}

/// A form session as stored: which template, which language, and the answers.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var templateID: String
    public var templateVersion: String
    public var language: String
    public var createdAt: String
    public var answers: [StoredAnswer]

    public init(
        id: String, templateID: String, templateVersion: String, language: String, createdAt: String,
        answers: [StoredAnswer] = []
    ) {
        self.id = id
        self.templateID = templateID
        self.templateVersion = templateVersion
        self.language = language
        self.createdAt = createdAt
        self.answers = answers
    }

    /// The next answer's sequence number.
    public var nextSequence: Int { (answers.map(\.sequence).max() ?? 0) + 1 }
}

/// Where sessions live. Every write is durable when it returns (a process killed right after keeps it), so the
/// engine acknowledges an answer only after `save` returns.
public protocol FormStore: AnyObject {
    /// Where it is and what it is, for messages (`SQLite 3.40.1, /…/forms.sqlite3 (WAL)`).
    var location: String { get }
    func sessions() throws -> [SessionRecord]
    func session(_ id: String) throws -> SessionRecord?
    /// Adds a new session (an error when the id exists).
    func create(_ session: SessionRecord) throws
    /// Saves (or replaces) one answer of a session, in one transaction.
    func save(_ answer: StoredAnswer, session id: String) throws
    /// Removes one answer (going back to change it).
    func remove(field: String, session id: String) throws
    /// Replaces a whole session and its answers in one transaction (restore).
    func replace(_ session: SessionRecord) throws
    func delete(session id: String) throws
}

/// Opens the store in `directory`: SQLite (the system libsqlite3) when it can be loaded, else a JSON file replaced
/// atomically on every write. `note` says which and why.
public enum FormStores {
    /// The SQLite store's file name in the directory.
    public static let sqliteFile = "forms.sqlite3"
    /// The fallback's file name.
    public static let jsonFile = "forms.json"

    public static func open(directory: URL) throws -> (store: any FormStore, note: String?) {
        // Under a file-size limit (ulimit -f) a write past it raises SIGXFSZ, which would kill the process in the
        // middle of a turn; ignored, the write fails with EFBIG and the store reports it (nothing saved is lost).
        signal(SIGXFSZ, SIG_IGN)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FormError.store(
                "\(directory.path): the store folder cannot be created (\(error.localizedDescription))")
        }
        let jsonURL = directory.appendingPathComponent(jsonFile)
        switch SQLiteLibrary.load() {
        case .success(let library):
            if FileManager.default.fileExists(atPath: jsonURL.path) {
                // A store written while SQLite was missing stays in use, so no answer is hidden.
                return (try JSONFormStore(file: jsonURL), "using \(jsonURL.path): it was written without SQLite")
            }
            return (try SQLiteFormStore(library: library, file: directory.appendingPathComponent(sqliteFile)), nil)
        case .failure(let error):
            let sqliteURL = directory.appendingPathComponent(sqliteFile)
            if FileManager.default.fileExists(atPath: sqliteURL.path) {
                throw FormError.store("\(sqliteURL.path) holds the sessions but SQLite cannot be loaded: \(error)")
            }
            return (try JSONFormStore(file: jsonURL), "SQLite is not available (\(error)); using the JSON file store")
        }
    }

    /// Now as ISO-8601 with seconds, UTC.
    public static func timestamp(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}
