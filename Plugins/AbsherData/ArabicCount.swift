/// The forms an Arabic noun takes after a number: one (`يوم واحد`), two (`يومان`), 3–10 (`أيام`), 11–99 (`يوماً`),
/// and 100 or more with no unit or with one or two (`يوم`).
public struct ArabicCountedNoun: Sendable {
    public var one: String
    public var two: String
    public var few: String
    public var many: String
    public var hundreds: String

    public static let day = ArabicCountedNoun(one: "يوم واحد", two: "يومان", few: "أيام", many: "يوماً", hundreds: "يوم")
    public static let second = ArabicCountedNoun(
        one: "ثانية واحدة", two: "ثانيتان", few: "ثوانٍ", many: "ثانيةً", hundreds: "ثانية")
}

/// `count` with the noun in the form the count takes (`45 يوماً`, `3 ثوانٍ`). Digits stay ASCII, as the grounding
/// check and the specification's messages write them.
public func arabicCount(_ count: Int, _ noun: ArabicCountedNoun) -> String {
    let n = count.magnitude
    switch (n, n % 100) {
    case (1, _): return noun.one
    case (2, _): return noun.two
    case (_, 3...10): return "\(count) \(noun.few)"
    case (_, 11...99): return "\(count) \(noun.many)"
    default: return "\(count) \(noun.hundreds)"
    }
}

/// A number of days in Arabic: يوم واحد, يومان, 3–10 أيام, 11–99 يوماً, and يوم after a hundred or more with no unit
/// or with one or two (100 يوم, 101 يوم).
public func arabicDays(_ count: Int) -> String { arabicCount(count, .day) }
