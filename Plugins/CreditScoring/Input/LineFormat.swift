/// The line formats of text input (see README.md):
/// - `plain`: `2024-03-01T10:15[:SS][Z] | Sender | text` (a space may replace the `T`),
/// - `whatsapp-ios`: `[01/03/2024, 10:15:00] Name: text`,
/// - `whatsapp-android`: `01/03/2024, 10:15 - Name: text`.
/// WhatsApp dates are day first (`--date-order mdy` for exports from a US phone); a 2-digit year is 20YY; `AM`/`PM`
/// is accepted; a line without `Name:` after the date is a system notice (counted, not a message).
public enum LineFormat: String, Sendable, CaseIterable {
    case plain
    case whatsappIOS = "whatsapp-ios"
    case whatsappAndroid = "whatsapp-android"
}

/// Day-first (`dmy`, the default) or month-first (`mdy`) dates in chat exports.
public enum DateOrder: String, Sendable, CaseIterable {
    case dmy
    case mdy
}

/// What one text line is.
enum ParsedLine: Equatable {
    case message(format: LineFormat, date: Int64, sender: String, text: String)
    /// A dated line without a sender (`Messages are end-to-end encrypted`).
    case notice(format: LineFormat)
    /// A line that starts with none of the formats' headers.
    case other
    /// A header whose date or time is wrong: always malformed.
    case bad(String)
}

enum LineParser {
    static func parse(_ line: [UInt8], dateOrder: DateOrder) -> ParsedLine {
        var start = 0
        // A WhatsApp export may put U+200E (LEFT-TO-RIGHT MARK, E2 80 8E) before the header.
        if line.count >= 3, line[0] == 0xE2, line[1] == 0x80, line[2] == 0x8E { start = 3 }
        guard start < line.count else { return .other }
        if line[start] == UInt8(ascii: "[") { return whatsapp(line, from: start + 1, ios: true, dateOrder: dateOrder) }
        if let plain = plain(line, from: start) { return plain }
        return whatsapp(line, from: start, ios: false, dateOrder: dateOrder)
    }

    /// `YYYY-MM-DD[T ]HH:MM[:SS][Z] | sender | text`.
    private static func plain(_ line: [UInt8], from start: Int) -> ParsedLine? {
        var c = ByteCursor(line, at: start)
        guard c.number(min: 4, max: 4) != nil, c.take(UInt8(ascii: "-")) else { return nil }
        c.index = start
        guard let date = isoDate(&c) else { return .bad("a plain line starts with a date YYYY-MM-DDTHH:MM[:SS]") }
        c.skipSpaces()
        guard c.take(UInt8(ascii: "|")) else { return .bad("expected ' | SENDER | TEXT' after the date") }
        c.skipSpaces()
        guard let bar = c.find([UInt8(ascii: "|")]) else { return .bad("expected ' | TEXT' after the sender") }
        let sender = trimmed(c.text(c.index..<bar))
        guard !sender.isEmpty else { return .bad("the sender is empty") }
        var rest = bar + 1
        if rest < line.count, line[rest] == 32 { rest += 1 }
        return .message(format: .plain, date: date, sender: sender, text: c.text(rest..<line.count))
    }

    /// `[DD/MM/YYYY, HH:MM:SS] Name: text` (ios) or `DD/MM/YYYY, HH:MM - Name: text`.
    private static func whatsapp(_ line: [UInt8], from start: Int, ios: Bool, dateOrder: DateOrder) -> ParsedLine {
        var c = ByteCursor(line, at: start)
        guard let first = c.number(min: 1, max: 2) else { return .other }
        let separator = c.peek
        guard separator == UInt8(ascii: "/") || separator == UInt8(ascii: "."), c.take(separator ?? 0),
            let second = c.number(min: 1, max: 2), c.take(separator ?? 0), var year = c.number(min: 2, max: 4)
        else { return .other }
        if year < 100 { year += 2000 }
        _ = c.take(UInt8(ascii: ","))
        c.skipSpaces()
        guard var hour = c.number(min: 1, max: 2), c.take(UInt8(ascii: ":")), let minute = c.number(min: 2, max: 2)
        else { return .other }
        var seconds = 0
        if c.take(UInt8(ascii: ":")) { seconds = c.number(min: 2, max: 2) ?? -1 }
        // "\u{202F}" (narrow no-break space, E2 80 AF) or a space before AM/PM.
        let afterTime = c.index
        _ = c.take("\u{202F}") || c.take(UInt8(ascii: " "))
        if c.take("PM") || c.take("pm") {
            guard (1...12).contains(hour) else { return .bad("hour \(hour) with PM") }
            if hour < 12 { hour += 12 }
        } else if c.take("AM") || c.take("am") {
            guard (1...12).contains(hour) else { return .bad("hour \(hour) with AM") }
            if hour == 12 { hour = 0 }
        } else {
            c.index = afterTime
        }
        let format: LineFormat = ios ? .whatsappIOS : .whatsappAndroid
        if ios {
            guard c.take(UInt8(ascii: "]")) else { return .other }
            c.skipSpaces()
        } else {
            c.skipSpaces()
            guard c.take(UInt8(ascii: "-")) else { return .other }
            c.skipSpaces()
        }
        let (day, month) = dateOrder == .dmy ? (first, second) : (second, first)
        guard
            let date = CivilTime.epochSeconds(
                year: year, month: month, day: day, hour: hour, minute: minute, second: seconds)
        else { return .bad("no such date or time in a \(format.rawValue) line") }
        guard let colon = c.find([UInt8(ascii: ":"), 32]) ?? (line.last == UInt8(ascii: ":") ? line.count - 1 : nil)
        else { return .notice(format: format) }
        let sender = trimmed(c.text(c.index..<colon))
        guard !sender.isEmpty else { return .notice(format: format) }
        let textStart = min(line.count, colon + 2)
        return .message(format: format, date: date, sender: sender, text: c.text(textStart..<line.count))
    }

    /// `YYYY-MM-DD[T ]HH:MM[:SS[.fff]][Z|±HH:MM]` at the cursor, as seconds since 1970 UTC (no zone = UTC).
    static func isoDate(_ c: inout ByteCursor) -> Int64? {
        guard let year = c.number(min: 4, max: 4), c.take(UInt8(ascii: "-")), let month = c.number(min: 2, max: 2),
            c.take(UInt8(ascii: "-")), let day = c.number(min: 2, max: 2),
            c.take(UInt8(ascii: "T")) || c.take(UInt8(ascii: " ")), let hour = c.number(min: 2, max: 2),
            c.take(UInt8(ascii: ":")), let minute = c.number(min: 2, max: 2)
        else { return nil }
        var second = 0
        if c.take(UInt8(ascii: ":")) {
            guard let s = c.number(min: 2, max: 2) else { return nil }
            second = s
            if c.take(UInt8(ascii: ".")) { guard c.number(min: 1, max: 9) != nil else { return nil } }
        }
        var offset = 0
        if c.take(UInt8(ascii: "+")) || c.peek == UInt8(ascii: "-") {
            let sign = c.take(UInt8(ascii: "-")) ? -1 : 1
            guard let h = c.number(min: 2, max: 2), h <= 23, c.take(UInt8(ascii: ":")),
                let m = c.number(min: 2, max: 2),
                m <= 59
            else { return nil }
            offset = sign * (h * 3600 + m * 60)
        } else {
            _ = c.take(UInt8(ascii: "Z"))
        }
        return CivilTime.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
            .map { $0 - Int64(offset) }
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\u{200E}" }.reversed().drop { $0 == " " || $0 == "\u{200E}" }.reversed())
    }
}
