import Foundation

/// A whole number a person typed, in Western (`12`), Arabic-Indic (`١٢`) or Extended Arabic-Indic (`۱۲`) digits,
/// surrounded by spaces at most; nil for anything else (a sign, a decimal point, letters, more than 9 digits).
public func parseLocalizedNumber(_ text: String) -> Int? {
    let digits = text.trimmingCharacters(in: .whitespaces).unicodeScalars
    guard !digits.isEmpty, digits.count <= 9 else { return nil }
    var value = 0
    for scalar in digits {
        let v = scalar.value
        let digit: UInt32
        switch v {
        case 0x30...0x39: digit = v - 0x30
        case 0x660...0x669: digit = v - 0x660
        case 0x6F0...0x6F9: digit = v - 0x6F0
        default: return nil
        }
        value = value * 10 + Int(digit)
    }
    return value
}

/// `n` in Arabic-Indic digits (`١٢`), for Arabic text.
public func arabicIndicDigits(_ n: Int) -> String {
    String(
        String.UnicodeScalarView(
            String(n).unicodeScalars.map { s in
                (0x30...0x39).contains(s.value) ? Unicode.Scalar(s.value - 0x30 + 0x660) ?? s : s
            }))
}
