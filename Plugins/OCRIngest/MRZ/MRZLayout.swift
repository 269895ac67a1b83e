/// The ICAO Doc 9303 machine-readable zone formats.
public enum MRZFormat: String, Sendable, CaseIterable {
    /// ID cards, 3 lines of 30 (Doc 9303 part 5).
    case td1 = "TD1"
    /// ID cards and other official travel documents, 2 lines of 36 (part 6).
    case td2 = "TD2"
    /// Passports, 2 lines of 44 (part 4).
    case td3 = "TD3"
    /// Visas, format A: 2 lines of 44 (part 7).
    case mrvA = "MRV-A"
    /// Visas, format B: 2 lines of 36 (part 7).
    case mrvB = "MRV-B"

    /// Lines and characters per line.
    public var shape: (lines: Int, length: Int) {
        switch self {
        case .td1: return (3, 30)
        case .td2, .mrvB: return (2, 36)
        case .td3, .mrvA: return (2, 44)
        }
    }
}

/// The fields of a machine-readable zone.
public enum MRZFieldID: String, Sendable, CaseIterable {
    case documentType, issuingState, documentNumber, documentNumberCheck, optionalData1, dateOfBirth,
        dateOfBirthCheck, sex, dateOfExpiry, dateOfExpiryCheck, nationality, optionalData2, optionalData2Check,
        compositeCheck, name
}

/// The check digits of a machine-readable zone.
public enum MRZCheckID: String, Sendable, CaseIterable {
    case documentNumber, dateOfBirth, dateOfExpiry, optionalData, composite
}

/// The character class a field allows; it decides which OCR confusions can be repaired.
enum MRZFieldKind: Sendable {
    case alpha, numeric, alphanumeric, sex, checkDigit
}

/// Where a field lies: `line` (0-based) and `columns` on it.
struct MRZFieldSpec: Sendable {
    let id: MRZFieldID
    let line: Int
    let columns: Range<Int>
    let kind: MRZFieldKind
}

/// A check digit at `digit`, over the characters at `covered` (line, columns), in order.
struct MRZCheckSpec: Sendable {
    let id: MRZCheckID
    var covered: [(line: Int, columns: Range<Int>)]
    var digit: (line: Int, column: Int)
    /// The check digit may be `<` when every covered character is `<` (TD3 personal number).
    var fillerWhenEmpty: Bool = false
}

struct MRZLayout: Sendable {
    let format: MRZFormat
    let fields: [MRZFieldSpec]
    let checks: [MRZCheckSpec]

    func field(_ id: MRZFieldID) -> MRZFieldSpec? { fields.first { $0.id == id } }

    static func of(_ format: MRZFormat) -> MRZLayout {
        switch format {
        case .td1: return td1
        case .td2: return twoLine(.td2, length: 36, optional: 28..<35, composite: true)
        case .td3: return twoLine(.td3, length: 44, optional: 28..<42, composite: true)
        case .mrvA: return twoLine(.mrvA, length: 44, optional: 28..<44, composite: false)
        case .mrvB: return twoLine(.mrvB, length: 36, optional: 28..<36, composite: false)
        }
    }

    private static let td1 = MRZLayout(
        format: .td1,
        fields: [
            .init(id: .documentType, line: 0, columns: 0..<2, kind: .alpha),
            .init(id: .issuingState, line: 0, columns: 2..<5, kind: .alpha),
            .init(id: .documentNumber, line: 0, columns: 5..<14, kind: .alphanumeric),
            .init(id: .documentNumberCheck, line: 0, columns: 14..<15, kind: .checkDigit),
            .init(id: .optionalData1, line: 0, columns: 15..<30, kind: .alphanumeric),
            .init(id: .dateOfBirth, line: 1, columns: 0..<6, kind: .numeric),
            .init(id: .dateOfBirthCheck, line: 1, columns: 6..<7, kind: .checkDigit),
            .init(id: .sex, line: 1, columns: 7..<8, kind: .sex),
            .init(id: .dateOfExpiry, line: 1, columns: 8..<14, kind: .numeric),
            .init(id: .dateOfExpiryCheck, line: 1, columns: 14..<15, kind: .checkDigit),
            .init(id: .nationality, line: 1, columns: 15..<18, kind: .alpha),
            .init(id: .optionalData2, line: 1, columns: 18..<29, kind: .alphanumeric),
            .init(id: .compositeCheck, line: 1, columns: 29..<30, kind: .checkDigit),
            .init(id: .name, line: 2, columns: 0..<30, kind: .alpha),
        ],
        checks: [
            .init(id: .documentNumber, covered: [(0, 5..<14)], digit: (0, 14)),
            .init(id: .dateOfBirth, covered: [(1, 0..<6)], digit: (1, 6)),
            .init(id: .dateOfExpiry, covered: [(1, 8..<14)], digit: (1, 14)),
            .init(id: .composite, covered: [(0, 5..<30), (1, 0..<7), (1, 8..<15), (1, 18..<29)], digit: (1, 29)),
        ])

    /// TD2, TD3 and the two visa formats share line 2 up to column 28.
    private static func twoLine(_ format: MRZFormat, length: Int, optional: Range<Int>, composite: Bool) -> MRZLayout {
        var fields: [MRZFieldSpec] = [
            .init(id: .documentType, line: 0, columns: 0..<2, kind: .alpha),
            .init(id: .issuingState, line: 0, columns: 2..<5, kind: .alpha),
            .init(id: .name, line: 0, columns: 5..<length, kind: .alpha),
            .init(id: .documentNumber, line: 1, columns: 0..<9, kind: .alphanumeric),
            .init(id: .documentNumberCheck, line: 1, columns: 9..<10, kind: .checkDigit),
            .init(id: .nationality, line: 1, columns: 10..<13, kind: .alpha),
            .init(id: .dateOfBirth, line: 1, columns: 13..<19, kind: .numeric),
            .init(id: .dateOfBirthCheck, line: 1, columns: 19..<20, kind: .checkDigit),
            .init(id: .sex, line: 1, columns: 20..<21, kind: .sex),
            .init(id: .dateOfExpiry, line: 1, columns: 21..<27, kind: .numeric),
            .init(id: .dateOfExpiryCheck, line: 1, columns: 27..<28, kind: .checkDigit),
            .init(id: .optionalData1, line: 1, columns: optional, kind: .alphanumeric),
        ]
        var checks: [MRZCheckSpec] = [
            .init(id: .documentNumber, covered: [(1, 0..<9)], digit: (1, 9)),
            .init(id: .dateOfBirth, covered: [(1, 13..<19)], digit: (1, 19)),
            .init(id: .dateOfExpiry, covered: [(1, 21..<27)], digit: (1, 27)),
        ]
        if format == .td3 {
            fields.append(.init(id: .optionalData2Check, line: 1, columns: 42..<43, kind: .checkDigit))
            checks.append(.init(id: .optionalData, covered: [(1, 28..<42)], digit: (1, 42), fillerWhenEmpty: true))
        }
        if composite {
            let end = length - 1
            fields.append(.init(id: .compositeCheck, line: 1, columns: end..<length, kind: .checkDigit))
            checks.append(
                .init(id: .composite, covered: [(1, 0..<10), (1, 13..<20), (1, 21..<end)], digit: (1, end)))
        }
        return MRZLayout(format: format, fields: fields, checks: checks)
    }
}

/// The MRZ character set, the 7-3-1 check digit and the classic OCR confusions.
enum MRZAlphabet {
    static let filler = UInt8(ascii: "<")

    /// 0–9 for digits, 10–35 for A–Z, 0 for `<`; nil for anything else.
    static func value(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(c) - 48
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(c) - 55
        case filler: return 0
        default: return nil
        }
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    static func isLetter(_ c: UInt8) -> Bool { c >= 65 && c <= 90 }
    static func isMRZ(_ c: UInt8) -> Bool { value(c) != nil }

    /// The ICAO check digit: Σ value × weight (7, 3, 1 repeating) mod 10; nil if a character is outside the set.
    static func checkDigit<S: Sequence>(_ characters: S) -> Int? where S.Element == UInt8 {
        var sum = 0
        var index = 0
        for c in characters {
            guard let v = value(c) else { return nil }
            sum += v * [7, 3, 1][index % 3]
            index += 1
        }
        return sum % 10
    }

    /// Letters OCR reads in place of digits, and back: O/0, I/1, B/8, S/5, Z/2, G/6.
    static let digitForLetter: [UInt8: UInt8] = [
        UInt8(ascii: "O"): UInt8(ascii: "0"), UInt8(ascii: "I"): UInt8(ascii: "1"),
        UInt8(ascii: "B"): UInt8(ascii: "8"), UInt8(ascii: "S"): UInt8(ascii: "5"),
        UInt8(ascii: "Z"): UInt8(ascii: "2"), UInt8(ascii: "G"): UInt8(ascii: "6"),
    ]
    static let letterForDigit: [UInt8: UInt8] = Dictionary(uniqueKeysWithValues: digitForLetter.map { ($1, $0) })

    /// The other side of a classic confusion, either direction.
    static func confusable(_ c: UInt8) -> UInt8? { digitForLetter[c] ?? letterForDigit[c] }
}
