import Foundation
import SanadCore

/// Telegram Desktop's JSON export (`result.json`): a whole export (`personal_information` and `chats.list`) or one
/// chat (`name`, `type`, `id`, `messages`). Each message of type `message` becomes a `Message`: its id is
/// `CHAT/ID`, its date `date_unixtime` (else `date`, read as UTC), its sender `from`, its text `text` (a string, or
/// parts whose strings and `text` fields are joined); it is mine when its `from_id` is the exporting user's
/// (`user<personal_information.user_id>`), or, in a one-chat export, when `from` is one of the `--me` names.
/// Service messages (joins, calls, pins) are counted as notices. The file is read whole (at most `maximumBytes`).
enum TelegramExport {
    static let maximumBytes = 512 << 20

    static func read(
        _ bytes: [UInt8], settings: ReaderSettings, summary: inout ReadSummary, _ body: (Message) throws -> Void
    ) throws {
        summary.format = "telegram"
        let value: JSONValue
        do {
            value = try StrictJSON(maximumBytes: maximumBytes, maximumDepth: 64).parse(bytes)
        } catch {
            throw CreditError.malformedInput(line: 1, reason: "not a Telegram export: \(error)")
        }
        guard case .object(let root) = value else {
            throw CreditError.malformedInput(line: 1, reason: "a Telegram export is a JSON object")
        }
        let me = root["personal_information"]?["user_id"].flatMap { id -> String? in
            if case .number(let n) = id { return "user" + String(Int64(n)) }
            return id.stringValue.map { "user" + $0 }
        }
        let meNames = Set(settings.me.map { $0.lowercased() })
        let chats: [JSONValue]
        if let list = root["chats"]?["list"]?.arrayValue {
            chats = list
        } else if root["messages"] != nil {
            chats = [value]
        } else {
            throw CreditError.malformedInput(line: 1, reason: "a Telegram export has chats.list or messages")
        }
        for (c, chat) in chats.enumerated() {
            guard let messages = chat["messages"]?.arrayValue else { continue }
            let chatID = chat["id"].map(Self.text) ?? String(c + 1)
            let chatName = chat["name"]?.stringValue ?? ""
            for message in messages {
                guard message["type"]?.stringValue == "message" else {
                    summary.notices += 1
                    continue
                }
                guard let id = message["id"].map(Self.text), let date = Self.date(message) else {
                    summary.skipped += 1
                    if summary.problems.count < ReadSummary.keptProblems {
                        summary.problems.append(
                            InputProblem(line: 1, reason: "chat \(chatID): a message without an id or a date"))
                    }
                    continue
                }
                let sender = message["from"]?.stringValue ?? ""
                let mine =
                    me.map { message["from_id"]?.stringValue == $0 } ?? meNames.contains(sender.lowercased())
                summary.messages += 1
                try body(
                    Message(
                        id: "\(chatID)/\(id)", date: date, sender: sender, isFromMe: mine,
                        chat: chatName.isEmpty ? (mine ? "" : sender) : chatName, text: Self.messageText(message),
                        line: summary.messages))
            }
        }
    }

    /// A number or string value as text (ids).
    static func text(_ value: JSONValue) -> String {
        if case .number(let n) = value, n.rounded() == n { return String(Int64(n)) }
        return value.stringValue ?? value.jsonString
    }

    /// `date_unixtime` (seconds, a string), else `date` (`2024-03-01T10:15:00`, read as UTC).
    static func date(_ message: JSONValue) -> Int64? {
        if let unix = message["date_unixtime"].map(text), let seconds = Int64(unix) { return seconds }
        guard let text = message["date"]?.stringValue else { return nil }
        var cursor = ByteCursor(Array(text.utf8))
        guard let date = LineParser.isoDate(&cursor), cursor.atEnd else { return nil }
        return date
    }

    /// The text of a message: a string, or an array of strings and `{"type", "text"}` parts.
    static func messageText(_ message: JSONValue) -> String {
        switch message["text"] {
        case .string(let s)?: return s
        case .array(let parts)?: return parts.map { $0.stringValue ?? $0["text"]?.stringValue ?? "" }.joined()
        default: return ""
        }
    }
}
