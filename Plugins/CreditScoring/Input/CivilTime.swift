import SanadCore

/// Message times (UTC seconds since 1970) to and from calendar fields, on `CivilDate`'s day arithmetic: the input
/// readers call it once per message, so no Foundation formatters.
enum CivilTime {
    /// Seconds since 1970-01-01T00:00:00Z, or nil when a field is out of range.
    static func epochSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64? {
        guard (1...9999).contains(year), let date = CivilDate(year: year, month: month, day: day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        return Int64(date.dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// `2024-03-01T10:15:00Z`.
    static func isoString(_ seconds: Int64) -> String {
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let rest = Int(seconds - Int64(days) * 86_400)
        return "\(CivilDate(dayNumber: days))T\(zeroPadded(rest / 3600, 2)):\(zeroPadded(rest / 60 % 60, 2)):"
            + "\(zeroPadded(rest % 60, 2))Z"
    }
}
