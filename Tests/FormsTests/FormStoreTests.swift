import FormsPlugin
import Foundation
import SanadArchive
import SanadCore
import SanadNative
import Testing

/// The stores (SQLite through dlopen, and the JSON file fallback) and session backups.
@Suite("form stores and backups")
struct FormStoreTests {
    static func sqlite(_ dir: URL) throws -> any FormStore {
        try SQLiteFormStore(library: try SQLiteLibrary.load().get(), file: dir.appendingPathComponent("forms.sqlite3"))
    }

    static func json(_ dir: URL) throws -> any FormStore {
        try JSONFormStore(file: dir.appendingPathComponent("forms.json"))
    }

    static let kinds: [String] = ["sqlite", "json"]

    static func open(_ kind: String, _ dir: URL) throws -> any FormStore {
        kind == "sqlite" ? try sqlite(dir) : try json(dir)
    }

    @Test("a session written, closed and opened again is identical; remove and replace work", arguments: kinds)
    func roundTrip(kind: String) throws {
        let dir = FormsFixture.temporaryDirectory()
        var expected: SessionRecord
        do {
            let store = try Self.open(kind, dir)
            var s = try FormSession.start(
                template: try FormsFixture.catalog().template("ds-160"), store: store, language: "ar", id: "s1",
                today: FormsFixture.today)
            try FormsFixture.answer(&s, Array(FormsFixture.ds160Answers.prefix(12)))
            try s.back()
            expected = s.record
            #expect(throws: FormError.self) {
                try store.create(
                    SessionRecord(id: "s1", templateID: "x", templateVersion: "1", language: "en", createdAt: ""))
            }
        }
        let reopened = try Self.open(kind, dir)
        #expect(try reopened.session("s1") == expected)
        #expect(try reopened.sessions().map(\.id) == ["s1"])
        expected.answers.removeLast()
        try reopened.replace(expected)
        #expect(try Self.open(kind, dir).session("s1") == expected)
        try reopened.delete(session: "s1")
        #expect(try Self.open(kind, dir).sessions().isEmpty)
        #expect(throws: FormError.self) {
            try reopened.save(
                StoredAnswer(fieldID: "a", value: "b", source: .typed, detail: "", sequence: 1, savedAt: ""),
                session: "gone")
        }
    }

    @Test("a value with a NUL is stored and read back whole, never cut at the NUL (issue 43)", arguments: kinds)
    func nulStoredWhole(kind: String) throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try Self.open(kind, dir)
        try store.create(
            SessionRecord(id: "s1", templateID: "dmv-renewal", templateVersion: "1", language: "en", createdAt: "t"))
        // The validator refuses control characters in answers; the store below it must still keep every byte.
        let answer = StoredAnswer(
            fieldID: "addressStreet", value: "12 Main\u{0} Street", source: .document, detail: "scan\u{0}\u{1B}x",
            sequence: 1, savedAt: "2026-11-27T10:00:00Z")
        try store.save(answer, session: "s1")
        let stored = try #require(try Self.open(kind, dir).session("s1")?.answers.first)
        #expect(stored == answer)
        #expect(stored.value.utf8.count == 15)
    }

    @Test("SQLite runs in WAL mode; a newer schema and a damaged file are refused with a clear message")
    func sqliteSafety() throws {
        let dir = FormsFixture.temporaryDirectory()
        let file = dir.appendingPathComponent("forms.sqlite3")
        do {
            let store = try Self.sqlite(dir)
            #expect(store.location.contains("(WAL)"))
            try store.create(
                SessionRecord(id: "a", templateID: "ds-160", templateVersion: "1.0.0", language: "en", createdAt: "t"))
            #expect(FileManager.default.fileExists(atPath: file.path + "-wal"))
        }
        // The header's user_version (bytes 60–63, big-endian) is the store schema.
        var bytes = try Data(contentsOf: file)
        bytes.replaceSubrange(60..<64, with: [0, 0, 0, 99])
        try bytes.write(to: file)
        #expect {
            _ = try Self.sqlite(dir)
        } throws: { "\($0)".contains("schema 99") && "\($0)".contains("reads schema 1 at most") }
        try Data(repeating: 0x41, count: 4096).write(to: file)
        #expect {
            _ = try Self.sqlite(dir)
        } throws: { "\($0)".contains(file.path) && "\($0)".contains("restore a backup") }
        try Data("{\"formatVersion\": 1, \"sessions\": [".utf8).write(to: dir.appendingPathComponent("forms.json"))
        #expect { _ = try Self.json(dir) } throws: { "\($0)".contains("forms.json: damaged") }
    }

    @Test("backup → delete → restore gives the same session; tampered or truncated backups change nothing")
    func backup() throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try Self.sqlite(dir)
        let catalog = try FormsFixture.catalog()
        var s = try FormSession.start(
            template: try catalog.template("dmv-renewal"), store: store, language: "es", id: "b1",
            today: FormsFixture.today)
        try FormsFixture.answer(&s, FormsFixture.dmvAnswers)
        let original = try #require(try store.session("b1"))
        let text = SessionBackup.make(original, now: Date())
        func plan(_ t: String) throws -> SessionBackup.Plan {
            try SessionBackup.plan(
                Array(t.utf8), file: "b.json", catalog: catalog, store: store, today: FormsFixture.today)
        }
        #expect(try plan(text).replaces)
        try store.delete(session: "b1")
        let p = try plan(text)
        #expect(!p.replaces && p.summary.contains("22 answers"))
        #expect(try store.session("b1") == nil, "planning writes nothing")
        try SessionBackup.restore(p, into: store)
        #expect(try Self.sqlite(dir).session("b1") == original)

        let tampered = text.replacingOccurrences(of: "\"Maria Lopez\"", with: "\"Mallory\"")
        #expect(tampered != text)
        #expect { _ = try plan(tampered) } throws: {
            "\($0)".contains("SHA-256") && "\($0)".contains("nothing changed")
        }
        #expect { _ = try plan(String(text.prefix(text.count / 2))) } throws: { "\($0)".contains("truncated") }
        #expect(try store.session("b1") == original)
    }

    @Test(
        "a ZIP backup of every session restores them all; a changed, extra, missing or truncated file changes nothing")
    func archive() throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try Self.sqlite(dir)
        let catalog = try FormsFixture.catalog()
        var a = try FormSession.start(
            template: try catalog.template("dmv-renewal"), store: store, language: "es", id: "a1",
            today: FormsFixture.today)
        try FormsFixture.answer(&a, FormsFixture.dmvAnswers)
        _ = try FormSession.start(
            template: try catalog.template("ds-160"), store: store, language: "ar", id: "a2", today: FormsFixture.today)
        let originals = try store.sessions()
        let key = BackupKey(bytes: Array(repeating: 7, count: 32))
        let bytes = try FormsArchive.make(
            originals, catalog: catalog, store: store, today: FormsFixture.today, now: Date(), key: key)
        let entries = try ZipArchive.read(bytes)
        #expect(entries.first?.path == FormsArchive.manifestPath)
        for path in [
            "sessions/a1.json", "documents/a1/form.txt", "documents/a2/checklist.txt", "templates/ds-160.form.json",
        ] {
            #expect(entries.contains { $0.path == path }, "\(path)")
        }
        func plan(_ b: [UInt8]) throws -> FormsArchive.Plan {
            try FormsArchive.plan(
                b, file: "b.zip", catalog: catalog, store: store, today: FormsFixture.today,
                trust: BackupTrust(keys: [key]))
        }
        for id in ["a1", "a2"] { try store.delete(session: id) }
        let p = try plan(bytes)
        #expect(p.sessions.map(\.record.id) == ["a1", "a2"] && p.sessions.allSatisfy { !$0.replaces })
        #expect(try store.sessions().isEmpty, "planning writes nothing")
        #expect(try FormsArchive.restore(p, into: store).map(\.id) == ["a1", "a2"])
        #expect(try Self.sqlite(dir).sessions() == originals)

        // Rewritten with valid CRCs, so only the manifest can tell.
        func rewritten(_ change: ([ZipEntry]) -> [ZipEntry]) throws -> [UInt8] {
            try ZipArchive.write(change(entries), modified: Date())
        }
        let changed = try rewritten {
            $0.map { e in
                e.path == "documents/a1/form.txt" ? ZipEntry(path: e.path, bytes: e.bytes + Array("x".utf8)) : e
            }
        }
        let extra = try rewritten { $0 + [ZipEntry(path: "sessions/evil.json", bytes: [])] }
        let missing = try rewritten { $0.filter { $0.path != "templates/ds-160.form.json" } }
        var flipped = bytes
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("Lopez".utf8)) })
        flipped[at] ^= 0x20
        let cases: [([UInt8], String)] = [
            (changed, "SHA-256 does not match"), (extra, "not in the manifest"), (missing, "not in the archive"),
            (Array(bytes.prefix(bytes.count - 30)), "truncated"), (flipped, "changed or damaged"),
        ]
        for (b, reason) in cases {
            #expect { _ = try plan(b) } throws: { "\($0)".contains(reason) && "\($0)".contains("nothing changed") }
        }
        #expect(try store.sessions() == originals)
    }
}
