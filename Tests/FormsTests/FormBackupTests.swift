import FormsPlugin
import Foundation
import SanadArchive
import SanadCore
import Testing

/// Backups that never lose data (issue 36): the keyed digest, restore's merge per session, automatic backups.
@Suite("form backups: keyed digest, merge, automatic")
struct FormBackupTests {
    /// A clock the test moves.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var time: Date
        init(_ iso: String) { time = ISO8601DateFormatter().date(from: iso)! }
        func now() -> Date { lock.withLock { time } }
        func advance(_ seconds: TimeInterval) { lock.withLock { time += seconds } }
    }

    static func plan(_ bytes: [UInt8], store: any FormStore, trust: BackupTrust) throws -> FormsArchive.Plan {
        try FormsArchive.plan(
            bytes, file: "b.zip", catalog: try FormsFixture.catalog(), store: store, today: FormsFixture.today,
            trust: trust)
    }

    static func archive(_ records: [SessionRecord], store: any FormStore, key: BackupKey) throws -> [UInt8] {
        try FormsArchive.make(
            records, catalog: try FormsFixture.catalog(), store: store, today: FormsFixture.today, now: Date(), key: key
        )
    }

    @Test(
        "a forger who recomputes every plain digest is refused; another store's key needs --key; none, --allow-unkeyed")
    func keyedDigest() throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try JSONFormStore(file: dir.appendingPathComponent("forms.json"))
        var s = try FormSession.start(
            template: try FormsFixture.catalog().template("dmv-renewal"), store: store, language: "en", id: "k1",
            today: FormsFixture.today)
        try FormsFixture.answer(&s, Array(FormsFixture.dmvAnswers.prefix(9)))
        let mine = try BackupKey.loadOrCreate(directory: dir)
        #expect(try BackupKey.loadOrCreate(directory: dir) == mine, "made once, then read")
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: dir.appendingPathComponent(BackupKey.fileName).path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let other = BackupKey(bytes: Array(repeating: 9, count: 32))
        let record = try #require(try store.session("k1"))
        var forged = record
        forged.answers = record.answers.map { a in
            var a = a
            if a.fieldID == "addressCity" { a.value = "Fresno" }
            return a
        }
        #expect(forged != record)
        #expect(
            try Self.plan(Self.archive([record], store: store, key: mine), store: store, trust: .init(keys: [mine]))
                .sessions.count == 1)

        // Every plain digest is right (the forger made it with the same code), the keyed one made with their key
        // and labelled with this store's key id.
        let relabelled = try ZipArchive.write(
            try ZipArchive.read(try Self.archive([forged], store: store, key: other)).map { e in
                guard e.path == FormsArchive.keyedDigestPath else { return e }
                let text = String(decoding: e.bytes, as: UTF8.self).replacingOccurrences(of: other.id, with: mine.id)
                return ZipEntry(path: e.path, bytes: Array(text.utf8))
            }, modified: Date())
        #expect { _ = try Self.plan(relabelled, store: store, trust: .init(keys: [mine])) } throws: {
            "\($0)".contains("keyed digest") && "\($0)".contains("does not match")
                && "\($0)".contains("nothing changed")
        }
        let theirs = try Self.archive([record], store: store, key: other)
        #expect { _ = try Self.plan(theirs, store: store, trust: .init(keys: [mine])) } throws: {
            "\($0)".contains("made with backup key \(other.id)") && "\($0)".contains("--key FILE")
        }
        #expect(try Self.plan(theirs, store: store, trust: .init(keys: [mine, other])).sessions.count == 1)
        let unkeyed = try ZipArchive.write(
            try ZipArchive.read(try Self.archive([record], store: store, key: mine)).filter {
                $0.path != FormsArchive.keyedDigestPath
            }, modified: Date())
        #expect { _ = try Self.plan(unkeyed, store: store, trust: .init(keys: [mine])) } throws: {
            "\($0)".contains("no keyed digest") && "\($0)".contains("--allow-unkeyed")
        }
        #expect(
            try Self.plan(unkeyed, store: store, trust: .init(keys: [mine], allowUnkeyed: true)).sessions.count == 1)
        #expect(try store.session("k1") == record, "nothing written")
    }

    @Test("restore keeps the newer version of a session by its last answer unless replacing; adds what is missing")
    func merge() throws {
        let dir = FormsFixture.temporaryDirectory()
        let store = try JSONFormStore(file: dir.appendingPathComponent("forms.json"))
        let clock = Clock("2026-11-24T10:00:00Z")
        let key = BackupKey(bytes: Array(repeating: 3, count: 32))
        var s = try FormSession.start(
            template: try FormsFixture.catalog().template("dmv-renewal"), store: store, language: "en", id: "m1",
            today: FormsFixture.today, now: clock.now)
        try FormsFixture.answer(&s, Array(FormsFixture.dmvAnswers.prefix(9)))
        let old = try #require(try store.session("m1"))
        #expect(old.answers.contains { $0.fieldID == "addressCity" && $0.value == "Sacramento" }, "\(old.answers)")
        let oldArchive = try Self.archive([old], store: store, key: key)
        clock.advance(3600)
        try s.reopen("addressCity")
        _ = try s.apply(FormProposal(fieldID: "addressCity", value: "Fresno"))
        let newer = try #require(try store.session("m1"))
        #expect(newer.lastAcknowledged > old.lastAcknowledged)
        let trust = BackupTrust(keys: [key])

        let keep = try Self.plan(oldArchive, store: store, trust: trust)
        #expect(
            keep.sessions[0].decision(replacing: false)
                == .keepStore(store: newer.lastAcknowledged, backup: old.lastAcknowledged))
        #expect(try FormsArchive.restore(keep, into: store).map(\.decision.writes) == [false])
        #expect(try store.session("m1") == newer, "the newer answer (Fresno) is kept")
        #expect(keep.sessions[0].decision(replacing: false).explanation.contains("--replace"))

        let replaced = try FormsArchive.restore(
            try Self.plan(oldArchive, store: store, trust: trust), into: store, replacing: true)
        #expect(replaced.map(\.decision.writes) == [true])
        #expect(try store.session("m1") == old)

        let update = try Self.plan(try Self.archive([newer], store: store, key: key), store: store, trust: trust)
        #expect(update.sessions[0].decision(replacing: false).writes)
        _ = try FormsArchive.restore(update, into: store)
        #expect(try store.session("m1") == newer)
        #expect(
            try Self.plan(oldArchive, store: store, trust: trust).sessions[0].decision(replacing: false).writes
                == false)
        #expect(
            try Self.plan(try Self.archive([newer], store: store, key: key), store: store, trust: trust).sessions[0]
                .decision(replacing: false) == .unchanged)
        try store.delete(session: "m1")
        #expect(try Self.plan(oldArchive, store: store, trust: trust).sessions[0].decision(replacing: false) == .add)
    }

    @Test("automatic backups: after the first answer, at most daily while answering, after completing; rotated")
    func automatic() throws {
        let dir = FormsFixture.temporaryDirectory()
        let inner = try JSONFormStore(file: dir.appendingPathComponent("forms.json"))
        let clock = Clock("2026-11-24T10:00:00Z")
        let key = try BackupKey.loadOrCreate(directory: dir)
        final class Notes: @unchecked Sendable { var lines: [String] = [] }
        let notes = Notes()
        let store = AutoBackupStore(
            inner, storeDirectory: dir, catalog: try FormsFixture.catalog(),
            policy: AutoBackupPolicy(enabled: true, keep: 2), now: clock.now,
            report: { notes.lines.append($0) })
        let backups = FormBackups(storeDirectory: dir)
        var s = try FormSession.start(
            template: try FormsFixture.catalog().template("dmv-renewal"), store: store, language: "en", id: "a1",
            today: FormsFixture.today, now: clock.now)
        #expect(backups.list().isEmpty, "starting a session is not an answer")
        func answer(_ texts: ArraySlice<String>) throws {
            for text in texts {
                clock.advance(60)
                try FormsFixture.answer(&s, [text])
            }
        }
        try answer(FormsFixture.dmvAnswers[0..<1])
        #expect(backups.list().map(\.kind) == [.auto] && notes.lines.last?.contains("the first answer") == true)
        try answer(FormsFixture.dmvAnswers[1..<6])
        #expect(backups.list().count == 1, "\(notes.lines)")
        clock.advance(86_400)
        try answer(FormsFixture.dmvAnswers[6..<7])
        #expect(backups.list().count == 2 && notes.lines.last?.contains("over a day old") == true, "\(notes.lines)")
        try answer(FormsFixture.dmvAnswers[7...])
        #expect(s.isComplete)
        let list = backups.list()
        #expect(list.count == 2, "rotated to the newest 2: \(list.map(\.url.lastPathComponent))")
        #expect(
            notes.lines.last?.contains("form a1 is complete") == true && notes.lines.last?.contains("removed") == true)
        #expect(list.last?.made == Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down)))
        let newest = try #require(list.last)
        let plan = try Self.plan(
            Array(try Data(contentsOf: newest.url)), store: inner, trust: BackupTrust(keys: [key]))
        #expect(plan.sessions.map(\.record) == [try #require(try inner.session("a1"))], "the newest holds every answer")
        #expect(plan.sessions[0].decision(replacing: false) == .unchanged)

        let offDir = FormsFixture.temporaryDirectory()
        let off = AutoBackupStore(
            try JSONFormStore(file: offDir.appendingPathComponent("forms.json")), storeDirectory: offDir,
            catalog: try FormsFixture.catalog(), policy: AutoBackupPolicy(enabled: false, keep: 2),
            now: clock.now, report: { _ in })
        var t = try FormSession.start(
            template: try FormsFixture.catalog().template("dmv-renewal"), store: off, language: "en",
            today: FormsFixture.today, now: clock.now)
        try FormsFixture.answer(&t, FormsFixture.dmvAnswers)
        #expect(FormBackups(storeDirectory: offDir).list().isEmpty)
    }
}
