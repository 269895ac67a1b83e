import SanadChat

/// The forms an Arabic noun takes after a number: one (`يوم واحد`), two (`يومان`; after a preposition `يومين`),
/// 3–10 (`أيام`), 11–99 (`يوماً`), and 100 or more with no unit or with one or two (`يوم`).
public struct ArabicCountedNoun: Sendable {
    public var one: String
    public var two: String
    public var few: String
    public var many: String
    public var hundreds: String

    /// The dual after a preposition (`منذ يومين`, `أكثر من ثانيتين`): `…ان` becomes `…ين`.
    public var twoGenitive: String { two.hasSuffix("ان") ? String(two.dropLast(2)) + "ين" : two }

    public static let day = ArabicCountedNoun(one: "يوم واحد", two: "يومان", few: "أيام", many: "يوماً", hundreds: "يوم")
    public static let second = ArabicCountedNoun(
        one: "ثانية واحدة", two: "ثانيتان", few: "ثوانٍ", many: "ثانيةً", hundreds: "ثانية")
    public static let violation = ArabicCountedNoun(
        one: "مخالفة واحدة", two: "مخالفتان", few: "مخالفات", many: "مخالفةً", hundreds: "مخالفة")
    public static let record = ArabicCountedNoun(
        one: "سجل واحد", two: "سجلان", few: "سجلات", many: "سجلاً", hundreds: "سجل")
}

/// `count` with the noun in the form the count takes (`45 يوماً`, `3 ثوانٍ`); `genitive` after a preposition (`منذ`,
/// `من`, `خلال`: only the dual changes, `يومين`). Digits stay ASCII, as the grounding check and the specification's
/// messages write them.
public func arabicCount(_ count: Int, _ noun: ArabicCountedNoun, genitive: Bool = false) -> String {
    let n = count.magnitude
    switch (n, n % 100) {
    case (1, _): return noun.one
    case (2, _): return genitive ? noun.twoGenitive : noun.two
    case (_, 3...10): return "\(count) \(noun.few)"
    case (_, 11...99): return "\(count) \(noun.many)"
    default: return "\(count) \(noun.hundreds)"
    }
}

/// A number of days in Arabic: يوم واحد, يومان, 3–10 أيام, 11–99 يوماً, and يوم after a hundred or more with no unit
/// or with one or two (100 يوم, 101 يوم).
public func arabicDays(_ count: Int, genitive: Bool = false) -> String {
    arabicCount(count, .day, genitive: genitive)
}

/// An English noun's singular and plural, for counts (`1 day`, `45 days`).
public struct EnglishCountedNoun: Sendable {
    public var one: String
    public var many: String

    public static let day = EnglishCountedNoun(one: "day", many: "days")
    public static let second = EnglishCountedNoun(one: "second", many: "seconds")
    public static let message = EnglishCountedNoun(one: "message", many: "messages")
    public static let tool = EnglishCountedNoun(one: "tool", many: "tools")
    public static let year = EnglishCountedNoun(one: "year", many: "years")
    public static let record = EnglishCountedNoun(one: "record", many: "records")
    public static let unpaidViolation = EnglishCountedNoun(one: "unpaid violation", many: "unpaid violations")
}

/// `count` with the noun in the number it takes (`1 day`, `0 days`, `45 days`).
public func englishCount(_ count: Int, _ noun: EnglishCountedNoun) -> String {
    "\(count) \(count.magnitude == 1 ? noun.one : noun.many)"
}

/// A number of days in `language`: `arabicDays` or `englishCount(_, .day)`.
public func days(_ count: Int, in language: ChatLanguage) -> String {
    language == .arabic ? arabicDays(count) : englishCount(count, .day)
}
