import Foundation

/// A calendar date without a time (proleptic Gregorian): an expiry date in user data (`2027-01-06`), a date a
/// document prints, a form's `date` answer, a message's day. The one date type of the host and its plugins.
///
/// Day arithmetic uses day numbers (days since 1970-01-01) computed with Howard Hinnant's civil-date algorithms, so
/// it does not depend on the process's time zone or calendar settings; "today" is the date of an injected clock in
/// a time zone the caller names.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    /// 1-based.
    public let month: Int
    /// 1-based.
    public let day: Int

    /// A valid date; nil when the month or day is out of range.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The date `dayNumber` days after 1970-01-01.
    public init(dayNumber: Int) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (m <= 2 ? 1 : 0)
        month = m
        day = d
    }

    /// Days since 1970-01-01 (negative before).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of `instant` in `zone` (default UTC).
    public static func today(_ instant: Date, in zone: TimeZone = TimeZone(secondsFromGMT: 0) ?? .current) -> CivilDate
    {
        let local = instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant))
        return CivilDate(dayNumber: Int((local / 86_400).rounded(.down)))
    }

    /// Days from `self` to `other` (positive when `other` is later).
    public func days(until other: CivilDate) -> Int { other.dayNumber - dayNumber }

    /// `self` moved by `days`.
    public func adding(days: Int) -> CivilDate { CivilDate(dayNumber: dayNumber + days) }

    /// `self` moved by whole calendar months; a day past the new month's end becomes its last day (Aug 31 + 6
    /// months = Feb 28 or 29).
    public func adding(months: Int) -> CivilDate {
        let index = year * 12 + (month - 1) + months
        let y = index >= 0 ? index / 12 : (index - 11) / 12
        let m = index - y * 12 + 1
        return CivilDate(year: y, month: m, day: Swift.min(day, Self.daysIn(month: m, year: y)))!
    }

    /// Whole years from `self` (a birth date) to `date`: an age.
    public func years(until date: CivilDate) -> Int {
        date.year - year - ((date.month, date.day) < (month, day) ? 1 : 0)
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.dayNumber < b.dayNumber }

    /// `YYYY-MM-DD` (ISO 8601).
    public var description: String { "\(zeroPadded(year, 4))-\(zeroPadded(month, 2))-\(zeroPadded(day, 2))" }
}

/// `value` in decimal with at least `width` digits (`zeroPadded(7, 2)` is `07`; a sign comes before the zeros).
public func zeroPadded(_ value: Int, _ width: Int) -> String {
    let digits = String(value.magnitude)
    return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
}
