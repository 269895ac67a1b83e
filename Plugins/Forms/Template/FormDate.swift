/// A calendar date without a time (proleptic Gregorian), the normal form of every `date` answer (`1974-08-12`).
public struct FormDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// A valid date with a four-digit year; nil when the month or day is out of range.
    public init?(year: Int, month: Int, day: Int) {
        guard (1000...9999).contains(year), (1...12).contains(month), day >= 1,
            day <= FormDate.days(inMonth: month, year: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    private init(checked year: Int, _ month: Int, _ day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// 2000-01-01, for a calendar that returns no date (it never does for a real clock).
    static let fallback = FormDate(checked: 2000, 1, 1)

    /// Parses exactly `YYYY-MM-DD`.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (a: FormDate, b: FormDate) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    /// Whole years from `self` (a birth date) to `date`.
    public func years(until date: FormDate) -> Int {
        date.year - year - ((date.month, date.day) < (month, day) ? 1 : 0)
    }

    public var description: String {
        let m = month < 10 ? "0\(month)" : "\(month)"
        let d = day < 10 ? "0\(day)" : "\(day)"
        return "\(year)-\(m)-\(d)"
    }
}
