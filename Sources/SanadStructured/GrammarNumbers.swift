/// GBNF for the numbers of `rule` (see `CompiledSchema.gbnf`): whole numbers within the bounds rounded inwards,
/// and for `number` also fractions `k.ddd` whose whole part keeps every fraction within them. Nil when no whole
/// number lies within the bounds.
func numberGrammar(_ rule: NumberRule) -> String? {
    let limit = Double(largestWritable)
    let low = Int64(min(max((rule.minimum ?? -limit).rounded(.up), -limit), limit + 1))
    let high = Int64(max(min((rule.maximum ?? limit).rounded(.down), limit), -limit - 1))
    guard low <= high else { return nil }
    var alternatives = [integerGrammar(low, high)]
    if !rule.integer {
        let fraction = "\".\" [0-9]{1,\(NumberProgress.maximumDigits)}"
        // k.ddd lies in (k, k+1): k ≥ low and k + 1 ≤ high.
        if max(low, 0) <= high - 1 { alternatives.append(digitsRange(max(low, 0), high - 1) + " " + fraction) }
        // -k.ddd lies in (-k-1, -k): -k ≤ high and -k-1 ≥ low.
        if max(0, -high) <= -low - 1 {
            alternatives.append("\"-\" " + digitsRange(max(0, -high), -low - 1) + " " + fraction)
        }
    }
    return alternatives.compactMap { $0 }.joined(separator: " | ")
}

/// The largest magnitude a grammar writes: 15 digits, as `NumberProgress` allows.
let largestWritable: Int64 = 999_999_999_999_999

/// Every whole number in `low…high` (no leading zeros, no `-0`); nil when the range is empty.
func integerGrammar(_ low: Int64, _ high: Int64) -> String? {
    var alternatives: [String] = []
    if high >= 0 { alternatives.append(digitsRange(max(low, 0), high)) }
    if low < 0 && max(1, -high) <= -low { alternatives.append("\"-\" " + digitsRange(max(1, -high), -low)) }
    return alternatives.isEmpty ? nil : "(" + alternatives.joined(separator: " | ") + ")"
}

/// The decimal digits of every number in `low…high` (0 ≤ low ≤ high), without leading zeros: one alternative per
/// digit count.
func digitsRange(_ low: Int64, _ high: Int64) -> String {
    var alternatives: [String] = []
    var length = String(low).count
    while true {
        let first: Int64 = length == 1 ? 0 : power10(length - 1)
        let last = power10(length) - 1
        let a = max(low, first)
        let b = min(high, last)
        if a <= b { alternatives.append(sameLength(digits(a), digits(b))) }
        if high <= last { break }
        length += 1
    }
    return "(" + alternatives.joined(separator: " | ") + ")"
}

private func power10(_ n: Int) -> Int64 { (0..<n).reduce(1) { value, _ in value * 10 } }
private func digits(_ n: Int64) -> [Int] { String(n).utf8.map { Int($0) - 48 } }

/// Every digit string from `a` to `b`, both of one length (leading zeros allowed after the first place).
private func sameLength(_ a: [Int], _ b: [Int]) -> String {
    guard let a0 = a.first, let b0 = b.first else { return "" }
    let rest = a.count - 1
    if rest == 0 { return "[\(a0)-\(b0)]" }
    let aRest = Array(a.dropFirst())
    let bRest = Array(b.dropFirst())
    if a0 == b0 { return "\"\(a0)\" " + sameLength(aRest, bRest) }
    if aRest.allSatisfy({ $0 == 0 }) && bRest.allSatisfy({ $0 == 9 }) { return "[\(a0)-\(b0)] [0-9]{\(rest)}" }
    var alternatives = ["\"\(a0)\" " + sameLength(aRest, Array(repeating: 9, count: rest))]
    if a0 + 1 <= b0 - 1 { alternatives.append("[\(a0 + 1)-\(b0 - 1)] [0-9]{\(rest)}") }
    alternatives.append("\"\(b0)\" " + sameLength(Array(repeating: 0, count: rest), bRest))
    return "(" + alternatives.joined(separator: " | ") + ")"
}
