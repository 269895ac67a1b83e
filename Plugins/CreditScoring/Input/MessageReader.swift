import SanadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How input is read: who "me" is in line formats, the date order of chat exports, and what to do with a line
/// that is not a message.
public struct ReaderSettings: Sendable, Equatable {
    /// Sender names (compared case-insensitively) that are the person themself in line formats.
    public var me: [String]
    public var dateOrder: DateOrder
    /// Skip malformed lines/records (each reported) instead of refusing the input.
    public var skipBad: Bool

    public static let defaultMe = ["me", "أنا"]

    public init(me: [String] = ReaderSettings.defaultMe, dateOrder: DateOrder = .dmy, skipBad: Bool = false) {
        self.me = me
        self.dateOrder = dateOrder
        self.skipBad = skipBad
    }
}

/// A line or record that was not a message and was skipped (`--skip-bad`).
public struct InputProblem: Sendable, Equatable {
    public var line: Int
    public var reason: String
}

/// What reading found besides the messages.
public struct ReadSummary: Sendable, Equatable {
    /// `json`, `telegram`, `imessage`, `plain`, `whatsapp-ios`, `whatsapp-android` (or several, joined with `+`).
    public var format = ""
    public var messages = 0
    /// Dated chat-export lines without a sender (system notices).
    public var notices = 0
    /// Messages read with no text (Apple Messages keeps some only in `attributedBody`, which Sanad does not read).
    public var withoutText = 0
    /// Lines joined to the message before them (multi-line chat-export messages).
    public var continuationLines = 0
    /// How many lines/records were skipped, and the first `keptProblems` of them.
    public var skipped = 0
    public var problems: [InputProblem] = []
    static let keptProblems = 100
}

/// Reads messages from a file descriptor in any supported format (a JSON array when the first non-blank character
/// is `[` followed by `{` or `]`; Telegram's JSON export when it is `{`; an Apple Messages `chat.db` when the file is
/// an SQLite database; else lines), calling `body` for each in input order. Memory stays bounded by one
/// line or record.
public struct MessageReader {
    public let settings: ReaderSettings
    private var source: LineSource
    private let meNames: Set<String>

    public init(descriptor: Int32, name: String, settings: ReaderSettings) {
        self.settings = settings
        source = LineSource(descriptor: descriptor, name: name)
        meNames = Set(settings.me.map { $0.lowercased() })
    }

    /// Opens `path` (`-` is standard input) and reads it.
    public static func read(
        path: String, settings: ReaderSettings, _ body: (Message) throws -> Void
    ) throws -> ReadSummary {
        if path == "-" {
            var reader = MessageReader(descriptor: 0, name: "standard input", settings: settings)
            return try reader.forEach(body)
        }
        if ChatDatabase.isDatabase(path) {
            var summary = ReadSummary()
            try ChatDatabase.read(path: path, settings: settings, summary: &summary, body)
            return summary
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CreditError.io("cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var reader = MessageReader(descriptor: fd, name: "'\(path)'", settings: settings)
        return try reader.forEach(body)
    }

    public mutating func forEach(_ body: (Message) throws -> Void) throws -> ReadSummary {
        var summary = ReadSummary()
        var first: [UInt8]?
        while let line = try source.next() {
            if line.contains(where: { $0 != 32 && $0 != 9 }) {
                first = line
                break
            }
        }
        guard let first else { return summary }
        let trimmed = first.drop { $0 == 32 || $0 == 9 }
        let afterBracket = trimmed.dropFirst().drop { $0 == 32 || $0 == 9 }
        if trimmed.first == UInt8(ascii: "{") {
            // A JSON object: Telegram's export, read whole.
            var bytes = first
            while let line = try source.next() {
                bytes.append(10)
                bytes += line
                guard bytes.count <= TelegramExport.maximumBytes else {
                    throw CreditError.io(
                        "the JSON export is over \(TelegramExport.maximumBytes >> 20) MiB; export fewer chats")
                }
            }
            try TelegramExport.read(bytes, settings: settings, summary: &summary, body)
        } else if trimmed.first == UInt8(ascii: "["),
            afterBracket.isEmpty
                || [UInt8(ascii: "{"), UInt8(ascii: "]")]
                    .contains(afterBracket.first ?? 0)
        {
            summary.format = "json"
            try readJSON(first: first, summary: &summary, body)
        } else {
            try readLines(first: first, summary: &summary, body)
        }
        return summary
    }

    private func report(_ line: Int, _ reason: String, _ summary: inout ReadSummary) throws {
        guard settings.skipBad else { throw CreditError.malformedInput(line: line, reason: reason) }
        summary.skipped += 1
        if summary.problems.count < ReadSummary.keptProblems {
            summary.problems.append(InputProblem(line: line, reason: reason))
        }
    }

    private mutating func readLines(
        first: [UInt8], summary: inout ReadSummary, _ body: (Message) throws -> Void
    ) throws {
        var pending: Message?
        var pendingFormat = LineFormat.plain
        var lastOther = ""
        var formats: [LineFormat] = []
        var line: [UInt8]? = first
        while let bytes = line {
            let number = source.lineNumber
            switch LineParser.parse(bytes, dateOrder: settings.dateOrder) {
            case .message(let format, let date, let sender, let text):
                if let done = pending {
                    summary.messages += 1
                    try body(done)
                }
                if !formats.contains(format) { formats.append(format) }
                let mine = meNames.contains(sender.lowercased())
                if !mine { lastOther = sender }
                pending = Message(
                    id: "L\(number)", date: date, sender: sender, isFromMe: mine, chat: mine ? lastOther : sender,
                    text: text, line: number)
                pendingFormat = format
            case .notice(let format):
                if !formats.contains(format) { formats.append(format) }
                summary.notices += 1
            case .other:
                if !bytes.contains(where: { $0 != 32 && $0 != 9 }) {
                    break  // blank lines separate nothing
                } else if pending != nil, pendingFormat != .plain {
                    pending?.text += "\n" + String(decoding: bytes, as: UTF8.self)
                    summary.continuationLines += 1
                } else {
                    try report(
                        number,
                        "not a message line (expected 'YYYY-MM-DDTHH:MM | SENDER | TEXT' or a chat export line)",
                        &summary)
                }
            case .bad(let reason):
                try report(number, reason, &summary)
            }
            line = try source.next()
        }
        if let done = pending {
            summary.messages += 1
            try body(done)
        }
        summary.format = formats.map(\.rawValue).joined(separator: "+")
    }

    private mutating func readJSON(
        first: [UInt8], summary: inout ReadSummary, _ body: (Message) throws -> Void
    ) throws {
        var scanner = JSONArrayScanner()
        var line: [UInt8]? = first
        while let bytes = line {
            for event in scanner.feed(bytes, number: source.lineNumber) {
                switch event {
                case .bad(let number, let reason):
                    try report(number, reason, &summary)
                case .value(let value, let number):
                    do {
                        let message = try Self.message(json: value, line: number)
                        summary.messages += 1
                        try body(message)
                    } catch let CreditError.malformedInput(line, reason) {
                        try report(line, reason, &summary)
                    }
                }
            }
            line = try source.next()
        }
        if let event = scanner.finish(lastLine: source.lineNumber), case .bad(let number, let reason) = event {
            try report(number, reason, &summary)
        }
    }

    /// One record of the JSON array: `{"id", "date", "sender", "isFromMe", "chat", "text"}` (`chat` may be
    /// missing; other keys are ignored).
    static func message(json bytes: [UInt8], line: Int) throws -> Message {
        func bad(_ reason: String) -> CreditError { .malformedInput(line: line, reason: reason) }
        let value: JSONValue
        do { value = try StrictJSON(maximumDepth: 16).parse(bytes) } catch {
            throw bad("not valid JSON: \(error)")
        }
        guard case .object(let object) = value else { throw bad("a record is a JSON object, not \(value.kindName)") }
        func string(_ key: String) throws -> String {
            guard let v = object[key] else { throw bad("the record has no \"\(key)\"") }
            guard case .string(let s) = v else { throw bad("\"\(key)\" must be a string, not \(v.kindName)") }
            return s
        }
        let id: String
        switch object["id"] {
        case .string(let s) where !s.isEmpty: id = s
        case .number(let n) where n.rounded() == n && abs(n) < 9e15: id = String(Int64(n))
        case nil: throw bad("the record has no \"id\"")
        case let v?: throw bad("\"id\" must be a non-empty string or an integer, not \(v.kindName)")
        }
        var cursor = ByteCursor(Array(try string("date").utf8))
        guard let date = LineParser.isoDate(&cursor), cursor.atEnd else {
            throw bad("\"date\" must be an ISO-8601 date-time such as 2024-03-01T10:15:00Z")
        }
        guard case .bool(let mine)? = object["isFromMe"] else { throw bad("\"isFromMe\" must be true or false") }
        let chat = object["chat"] == nil ? "" : try string("chat")
        let sender = try string("sender")
        return Message(
            id: id, date: date, sender: sender, isFromMe: mine, chat: chat.isEmpty && !mine ? sender : chat,
            text: try string("text"), line: line)
    }
}
