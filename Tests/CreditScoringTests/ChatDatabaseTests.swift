import CreditScoringPlugin
import Foundation
import SanadTestSupport
import Testing

/// Apple Messages' chat.db (issue 38), made by the test with Python's sqlite3 (the system SQLite).
@Suite("credit input: chat.db", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
struct ChatDatabaseTests {
    static let schema = """
        CREATE TABLE handle (ROWID INTEGER PRIMARY KEY, id TEXT);
        CREATE TABLE chat (ROWID INTEGER PRIMARY KEY, chat_identifier TEXT, display_name TEXT);
        CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT, date INTEGER, is_from_me INTEGER,
                              handle_id INTEGER, attributedBody BLOB);
        CREATE TABLE chat_message_join (chat_id INTEGER, message_id INTEGER);
        INSERT INTO handle VALUES (1, '+966500000001'), (2, 'ali@example.com');
        INSERT INTO chat VALUES (1, '+966500000001', 'Mom'), (2, 'ali@example.com', '');
        INSERT INTO message VALUES (1, 'Good morning habibi', 730980900000000000, 0, 1, NULL),
                                   (2, 'I paid the rent', 730980960, 1, 1, NULL),
                                   (3, NULL, 730981020000000000, 0, 2, x'040B73747265616D');
        INSERT INTO chat_message_join VALUES (1, 1), (1, 2), (2, 3);
        """

    /// Runs `sql` into a new SQLite file with Python's sqlite3.
    func database(_ sql: String) throws -> URL {
        let file = try CreditFixtures.temporaryDirectory().appendingPathComponent("chat.db")
        let made = try runChildProcess(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.stdin.read()); c.commit()",
                file.path,
            ], stdin: Data(sql.utf8), mergeStderr: true)
        #expect(made.status == 0, "\(String(decoding: made.stdout, as: UTF8.self))")
        return file
    }

    func read(_ file: URL) throws -> ([Message], ReadSummary) {
        var messages: [Message] = []
        let summary = try MessageReader.read(path: file.path, settings: ReaderSettings()) { messages.append($0) }
        return (messages, summary)
    }

    @Test("chats, handles, Apple dates (seconds and nanoseconds), and texts kept only in attributedBody counted")
    func messages() throws {
        // 2024-03-01T10:15:00Z is 730 980 900 s after 2001-01-01; iOS 11 and later store nanoseconds.
        let (m, s) = try read(try database(Self.schema))
        #expect(s.format == "imessage" && s.messages == 3 && s.withoutText == 1, "\(s)")
        #expect(m.map(\.id) == ["m1", "m2", "m3"])
        #expect(m[0].date == 1_709_288_100 && m[0].contact == "Mom" && !m[0].isFromMe && m[0].text.hasPrefix("Good"))
        #expect(m[1].isFromMe && m[1].contact == "Mom" && m[1].date == 1_709_288_160)
        #expect(m[2].contact == "ali@example.com" && m[2].text.isEmpty)
        let r = try CreditAnalysis.run(path: try database(Self.schema).path, settings: AnalysisSettings())
        #expect(r.counts["inputMessages"] == 3 && r.counts["promisesKept"] == 0)
    }

    @Test("an SQLite file that is not a Messages database is refused, naming the missing table")
    func notMessages() throws {
        let other = try database("CREATE TABLE t (x);")
        #expect { _ = try read(other) } throws: { "\($0)".contains("without a 'message' table") }
    }
}
