import FormsPlugin
import Foundation
import SanadCore
import Testing

/// Hostile ids and answers (issue 43): one id rule at start, resume, every by-id store access, restore and archive;
/// answers with control characters or past the length limit refused; terminal output escaped.
@Suite("form ids and answers under attack")
struct FormsHostileTests {
    static let badIDs = [
        "", ".", "..", ".hidden", "-rf", "a/b", "../x", "ä", "a b", "a\u{0}b", "x\u{1B}]0;pwned\u{7}",
        String(repeating: "a", count: 65), String(repeating: "a", count: 5000),
    ]

    @Test("start, resume and every by-id store access refuse the same ids", arguments: FormStoreTests.kinds)
    func ids(kind: String) throws {
        let store = try FormStoreTests.open(kind, FormsFixture.temporaryDirectory())
        let catalog = try FormsFixture.catalog()
        let template = try catalog.template("dmv-renewal")
        for id in Self.badIDs {
            #expect(throws: FormError.self) {
                _ = try FormSession.start(
                    template: template, store: store, language: "en", id: id, today: FormsFixture.today)
            }
            #expect(throws: FormError.self) {
                _ = try FormSession.resume(id: id, store: store, catalog: catalog, today: FormsFixture.today)
            }
            #expect(throws: FormError.self) { _ = try store.session(id) }
            let record = SessionRecord(
                id: id, templateID: "dmv-renewal", templateVersion: template.metadata.version, language: "en",
                createdAt: "2026-11-24T00:00:00Z")
            #expect(throws: FormError.self) { try store.create(record) }
            #expect(throws: FormError.self) { try store.replace(record) }
            #expect(throws: FormError.self) {
                try store.save(
                    StoredAnswer(
                        fieldID: "f", value: "v", source: .typed, detail: "", sequence: 1, savedAt: "2026-11-24"),
                    session: id)
            }
        }
        #expect(try store.sessions().isEmpty, "nothing with a refused id was stored")
        for good in ["a", "dmv-renewal-1a2b3c4d", "A.b_c-9", String(repeating: "z", count: 64)] {
            _ = try FormSession.start(
                template: template, store: store, language: "en", id: good, today: FormsFixture.today)
        }
    }

    @Test("refusals quote the id with control characters escaped and long ids cut")
    func refusalText() {
        let message = SessionID.problem("x\u{1B}]0;pwned\u{7}") ?? ""
        #expect(message.contains("\\u{1B}") && !message.contains("\u{1B}") && !message.contains("\u{7}"))
        let long = SessionID.problem(String(repeating: "a", count: 5000)) ?? ""
        #expect(long.contains("5000") && long.utf8.count < 300)
        #expect(SessionID.problem("..")?.contains("starting with a letter or digit") == true)
    }

    @Test("restore refuses a backup whose session id breaks the rule, though its checksum matches")
    func restoreRefusesBadIDs() throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try FormStoreTests.sqlite(dir)
        let catalog = try FormsFixture.catalog()
        let version = try catalog.template("dmv-renewal").metadata.version
        for id in ["..", String(repeating: "a", count: 5000), "x\u{1B}[2J"] {
            let record = SessionRecord(
                id: id, templateID: "dmv-renewal", templateVersion: version, language: "en",
                createdAt: "2026-11-24T00:00:00Z")
            let backup = SessionBackup.make(record, now: Date())
            #expect {
                _ = try SessionBackup.plan(
                    Array(backup.utf8), file: "b.json", catalog: catalog, store: store, today: FormsFixture.today)
            } throws: { "\($0)".contains("session.id") && !"\($0)".contains("\u{1B}") }
            #expect {
                _ = try FormsArchive.make(
                    [record], catalog: catalog, store: store, today: FormsFixture.today, now: Date(),
                    key: BackupKey(bytes: Array(repeating: 1, count: 32)))
            } throws: {
                "\($0)".contains("not backed up")
            }
        }
        #expect(try store.sessions().isEmpty)
    }

    @Test("an answer with NUL, ESC, another control character or a direction override is refused, nothing saved")
    func controlCharacters() throws {
        var s = try FormsFixture.session("dmv-renewal")
        try FormsFixture.answer(&s, Array(FormsFixture.dmvAnswers.prefix(7)))
        let field = try #require(s.nextQuestion?.field.id)
        #expect(field == "addressStreet")
        for hostile in [
            "12 Main\u{0} Street", "12 Main \u{1B}]0;pwned\u{7}Street", "12 Main\u{85}Street", "12 Main \u{202E}teertS",
            "12 \u{2067}Main\u{2069} Street",
        ] {
            let outcome = try s.apply(FormProposal(fieldID: field, value: hostile))
            guard case .refused(let problem) = outcome else {
                Issue.record("'\(TerminalText.escaped(hostile))' was accepted")
                continue
            }
            #expect(problem.message.contains("control character"))
            #expect(!s.record.answers.contains { $0.fieldID == field })
        }
        // Tabs and line breaks are white space, collapsed as before.
        _ = try s.apply(FormProposal(fieldID: field, value: "12\tMain\nStreet"))
        #expect(s.record.answers.first { $0.fieldID == field }?.value == "12 Main Street")
    }

    @Test("every free-text answer has a length limit; 10 MB is refused at once")
    func lengthLimits() throws {
        let template = try FormsFixture.catalog().template("dmv-renewal")
        let validator = FieldValidator(today: FormsFixture.today)
        for id in ["addressStreet", "previousName", "medicalDetails", "addressCity"] {
            let field = try #require(template.field(id))
            let limit = min(field.validation.maxLength ?? FieldValidator.maxAnswerCharacters, 1000)
            for size in [limit + 1, 10 << 20] {
                let answer = (id == "addressStreet" ? "12 " : "Ana ") + String(repeating: "a", count: size)
                guard case .failure(let p) = validator.normalize(answer, for: field) else {
                    Issue.record("\(id): \(size) characters accepted")
                    continue
                }
                #expect(p.message.contains("at most \(limit) characters"))
            }
        }
    }

    @Test("terminal text: controls, C1, bidi overrides and backslashes escaped; other scripts kept")
    func terminalText() {
        #expect(TerminalText.escaped("a\u{1B}[31mb") == "a\\u{1B}[31mb")
        #expect(TerminalText.escaped("x\u{0}y\u{9B}z") == "x\\u{0}y\\u{9B}z")
        #expect(TerminalText.escaped("\u{202E}txt") == "\\u{202E}txt")
        #expect(TerminalText.escaped("a\\u{1B}") == "a\\\\u{1B}")
        #expect(TerminalText.escaped("ماريا لوبيز 12") == "ماريا لوبيز 12")
    }
}
