import Foundation
import SanadNative

/// Apple Messages' `chat.db` (an SQLite database from a phone backup or a Mac's `~/Library/Messages`), read with
/// the system SQLite, read-only: `message` (text, date, is_from_me), `handle` (the other person's number or
/// address), `chat` and `chat_message_join` (the conversation's name). A message is `m<ROWID>`; its date is Apple's
/// (seconds, or nanoseconds since iOS 11, from 2001-01-01 UTC); its contact the chat's display name, else its
/// identifier, else the handle. Messages whose text lives only in `attributedBody` (a binary archive newer systems
/// write) are read with no text and counted in `withoutText`, so the analysis says how many it could not read.
enum ChatDatabase {
    /// The first bytes of every SQLite database file.
    static let magic = Array("SQLite format 3\0".utf8)

    /// Seconds from 1970-01-01 to Apple's epoch, 2001-01-01 UTC.
    static let appleEpoch: Int64 = 978_307_200

    static func isDatabase(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: magic.count)).map(Array.init) == magic
    }

    static func read(
        path: String, settings: ReaderSettings, summary: inout ReadSummary, _ body: (Message) throws -> Void
    ) throws {
        summary.format = "imessage"
        let lib: SQLiteLibrary
        switch SQLiteLibrary.load() {
        case .success(let loaded): lib = loaded
        case .failure(let error):
            throw CreditError.io("\(path) is an SQLite database (chat.db): reading it needs \(error)")
        }
        let db = try SQLiteDatabase(lib: lib, file: path, readOnly: true) { CreditError.io($0) }
        let tables = Set(
            try db.run("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0.first?.text })
        for table in ["message", "handle", "chat", "chat_message_join"] where !tables.contains(table) {
            throw CreditError.io("\(path) is an SQLite database without a '\(table)' table: not a Messages chat.db")
        }
        let rows = try db.run(
            """
            SELECT m.ROWID, m.date, m.is_from_me, COALESCE(h.id, ''), COALESCE(c.display_name, ''),
                   COALESCE(c.chat_identifier, ''), COALESCE(m.text, ''), m.attributedBody IS NOT NULL
            FROM message m LEFT JOIN handle h ON h.ROWID = m.handle_id
                 LEFT JOIN chat_message_join j ON j.message_id = m.ROWID LEFT JOIN chat c ON c.ROWID = j.chat_id
            ORDER BY m.ROWID
            """, integerColumns: [0, 1, 2, 7])
        // In time order (Apple's dates, whichever unit each row has, converted first), rows of one time by ROWID.
        func date(_ row: [SQLiteDatabase.Value]) -> Int64 {
            let raw = row[1].int
            return appleEpoch + (abs(raw) > 1_000_000_000_000 ? raw / 1_000_000_000 : raw)
        }
        let ordered = rows.enumerated().sorted { (date($0.element), $0.offset) < (date($1.element), $1.offset) }
        for (n, (_, row)) in ordered.enumerated() {
            let date = date(row)
            let mine = row[2].int != 0
            let handle = row[3].text
            let chat = [row[4].text, row[5].text, handle].first { !$0.isEmpty } ?? ""
            let text = row[6].text
            if text.isEmpty && row[7].int != 0 { summary.withoutText += 1 }
            summary.messages += 1
            try body(
                Message(
                    id: "m\(row[0].int)", date: date, sender: mine ? (settings.me.first ?? "me") : handle,
                    isFromMe: mine, chat: chat, text: text, line: n + 1))
        }
    }
}
