/// A number of days in Arabic with the noun in the form the count takes: يوم واحد, يومان, 3–10 أيام, 11–99 يوماً, and
/// يوم after a hundred or more with no unit or with one or two (100 يوم, 101 يوم). Digits stay ASCII, as the
/// grounding check and the specification's messages write them.
public func arabicDays(_ count: Int) -> String {
    let n = count.magnitude
    switch (n, n % 100) {
    case (1, _): return "يوم واحد"
    case (2, _): return "يومان"
    case (_, 3...10): return "\(count) أيام"
    case (_, 11...99): return "\(count) يوماً"
    default: return "\(count) يوم"
    }
}
