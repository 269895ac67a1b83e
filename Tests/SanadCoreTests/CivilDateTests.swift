import SanadCore
import Testing

/// Calendar dates: month arithmetic at month ends and leap days, against day arithmetic.
@Suite("civil dates")
struct CivilDateTests {
    static func date(_ iso: String) -> CivilDate { CivilDate(iso: iso)! }

    @Test("adding months keeps the day, or takes the month's last day when the day is past it")
    func months() {
        let cases: [(String, Int, String)] = [
            ("2027-03-31", 6, "2027-09-30"), ("2027-08-31", 6, "2028-02-29"), ("2027-01-31", 1, "2027-02-28"),
            ("2027-12-15", 1, "2028-01-15"), ("2027-03-31", -1, "2027-02-28"), ("2027-01-15", -13, "2025-12-15"),
            ("2028-02-29", 12, "2029-02-28"), ("2027-06-01", 0, "2027-06-01"), ("0001-01-01", -1, "0000-12-01"),
        ]
        for (start, n, expected) in cases {
            #expect(Self.date(start).adding(months: n).description == expected, "\(start) + \(n) months")
        }
        var d = Self.date("2026-11-27")
        for _ in 0..<600 {
            let next = d.adding(months: 1)
            #expect(next > d && d.days(until: next) >= 28 && d.days(until: next) <= 31, "\(d)")
            d = next
        }
    }
}
