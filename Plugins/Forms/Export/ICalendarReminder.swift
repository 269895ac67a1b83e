import Foundation
import SanadCore

/// An all-day calendar event with a display alarm, as an iCalendar file (RFC 5545): CRLF line ends, text values
/// escaped, content lines folded at 75 octets without splitting a UTF-8 character.
public struct ICalendarReminder: Sendable, Equatable {
    public var uid: String
    public var date: CivilDate
    public var summary: String
    public var description: String
    /// The alarm fires this many days before the day (0: on the day, at its start).
    public var alarmDaysBefore: Int

    public init(uid: String, date: CivilDate, summary: String, description: String, alarmDaysBefore: Int) {
        self.uid = uid
        self.date = date
        self.summary = summary
        self.description = description
        self.alarmDaysBefore = alarmDaysBefore
    }

    public func render(stamp: Date) -> String {
        let lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Sanad//Forms//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
            "BEGIN:VEVENT", "UID:\(icsText(uid))", "DTSTAMP:\(icsStamp(stamp))", "DTSTART;VALUE=DATE:\(icsDate(date))",
            "SUMMARY:\(icsText(summary))", "DESCRIPTION:\(icsText(description))",
            "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:\(icsText(summary))",
            "TRIGGER;RELATED=START:-P\(max(0, alarmDaysBefore))D", "END:VALARM", "END:VEVENT", "END:VCALENDAR",
        ]
        return lines.map(icsFolded).joined(separator: "\r\n") + "\r\n"
    }
}

/// `YYYYMMDD`. An all-day event with no DTEND lasts that one day (RFC 5545 3.6.1).
func icsDate(_ d: CivilDate) -> String { String(d.description.filter { $0 != "-" }) }

func icsStamp(_ date: Date) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "UTC")
    f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    return f.string(from: date)
}

/// A TEXT value: backslash, semicolon, comma and line breaks escaped (RFC 5545 3.3.11); other control characters
/// dropped.
func icsText(_ s: String) -> String {
    var out = ""
    for ch in s {
        switch ch {
        case "\\": out += "\\\\"
        case ";": out += "\\;"
        case ",": out += "\\,"
        case "\n", "\r\n", "\r": out += "\\n"
        default: if !(ch.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) { out.append(ch) }
        }
    }
    return out
}

/// Folds a content line into pieces of at most 75 octets, each continuation starting with one space (RFC 5545
/// 3.1); a piece never ends inside a UTF-8 character.
func icsFolded(_ line: String) -> String {
    var pieces: [String] = []
    var current = ""
    var octets = 0
    for scalar in line.unicodeScalars {
        let n = String(scalar).utf8.count
        let limit = pieces.isEmpty ? 75 : 74
        if octets + n > limit {
            pieces.append(current)
            current = ""
            octets = 0
        }
        current.unicodeScalars.append(scalar)
        octets += n
    }
    pieces.append(current)
    return pieces.joined(separator: "\r\n ")
}
