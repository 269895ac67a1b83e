/// The code point classes the pre-tokenizer regexes need (`\p{L}`, `\p{N}`, `\s`, …), answered the way llama.cpp
/// b11434 answers them (`src/unicode-data.cpp`, generated from Unicode 15.1's `UnicodeData.txt`).
///
/// The general category comes from Swift's `Unicode.Scalar.Properties`; a code point assigned after Unicode 15.1
/// (newer Swift runtimes know Unicode 16 and 17) counts as unassigned, as it does in llama.cpp's table. Checked over
/// all 0x110000 code points against llama.cpp's table on Swift 6.3 / Linux: zero differences. `\s` is the 25 code
/// points of the Unicode White_Space property, the set llama.cpp lists as `unicode_set_whitespace`.
struct CodepointClass: Equatable {
    let rawValue: UInt8

    // The category, one of these, in the low bits.
    static let undefined: UInt8 = 1
    static let number: UInt8 = 2
    static let letter: UInt8 = 3
    static let separator: UInt8 = 4
    static let mark: UInt8 = 5
    static let punctuation: UInt8 = 6
    static let symbol: UInt8 = 7
    static let control: UInt8 = 8
    /// Flag bit: a `\s` code point.
    static let whitespaceBit: UInt8 = 0x80

    /// The class of a position outside the text being scanned: no category, no flag (llama.cpp's empty flags).
    static let outside = CodepointClass(rawValue: 0)

    var category: UInt8 { rawValue & 0x0F }
    /// `\p{L}`
    var isLetter: Bool { category == Self.letter }
    /// `\p{N}`
    var isNumber: Bool { category == Self.number }
    /// `\s`
    var isWhitespace: Bool { rawValue & Self.whitespaceBit != 0 }
    /// True for every code point, false for `outside`.
    var exists: Bool { rawValue != 0 }

    /// The class of a code point.
    @inline(__always)
    static func of(_ codepoint: UInt32) -> CodepointClass {
        if codepoint < 0x10000 { return CodepointClass(rawValue: basicPlane[Int(codepoint)]) }
        return CodepointClass(rawValue: compute(codepoint))
    }

    /// Classes of U+0000…U+FFFF, computed once.
    private static let basicPlane: [UInt8] = (0..<0x10000).map { compute(UInt32($0)) }

    private static func compute(_ codepoint: UInt32) -> UInt8 {
        guard let scalar = Unicode.Scalar(codepoint) else { return control }  // surrogates: Cs
        let properties = scalar.properties
        var value: UInt8
        if let age = properties.age, age.major > 15 || (age.major == 15 && age.minor > 1) {
            value = undefined
        } else {
            switch properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
                value = letter
            case .decimalNumber, .letterNumber, .otherNumber:
                value = number
            case .nonspacingMark, .spacingMark, .enclosingMark:
                value = mark
            case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
                .finalPunctuation, .otherPunctuation:
                value = punctuation
            case .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
                value = symbol
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                value = separator
            case .control, .format, .privateUse, .surrogate:
                value = control
            case .unassigned:
                value = undefined
            @unknown default:
                value = undefined
            }
        }
        if isWhiteSpace(codepoint) { value |= whitespaceBit }
        return value
    }

    /// The Unicode White_Space property (25 code points, unchanged since Unicode 6.3).
    private static func isWhiteSpace(_ c: UInt32) -> Bool {
        switch c {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }
}

/// Decodes UTF-8 into code points the way llama.cpp does (`unicode_cpts_from_utf8`): a byte that does not start a
/// well-formed sequence becomes U+FFFD and decoding goes on at the next byte.
func llamaCodepoints(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt32] {
    var out: [UInt32] = []
    out.reserveCapacity(bytes.count)
    let n = bytes.count
    var i = 0
    while i < n {
        let b0 = UInt32(bytes[i])
        @inline(__always) func continuation(_ k: Int) -> Bool { i + k < n && bytes[i + k] & 0xC0 == 0x80 }
        if b0 & 0x80 == 0 {
            out.append(b0)
            i += 1
        } else if b0 & 0x40 == 0 {
            out.append(0xFFFD)
            i += 1
        } else if b0 & 0x20 == 0 {
            if continuation(1) {
                out.append((b0 & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F))
                i += 2
            } else {
                out.append(0xFFFD)
                i += 1
            }
        } else if b0 & 0x10 == 0 {
            if continuation(1) && continuation(2) {
                out.append((b0 & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F))
                i += 3
            } else {
                out.append(0xFFFD)
                i += 1
            }
        } else if b0 & 0x08 == 0 {
            if continuation(1) && continuation(2) && continuation(3) {
                out.append(
                    (b0 & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12 | UInt32(bytes[i + 2] & 0x3F) << 6
                        | UInt32(bytes[i + 3] & 0x3F))
                i += 4
            } else {
                out.append(0xFFFD)
                i += 1
            }
        } else {
            out.append(0xFFFD)
            i += 1
        }
    }
    return out
}

/// Appends the UTF-8 encoding of a code point (any value up to 0x10FFFF, surrogates included, as llama.cpp does).
@inline(__always)
func appendUTF8(_ c: UInt32, to out: inout [UInt8]) {
    if c < 0x80 {
        out.append(UInt8(c))
    } else if c < 0x800 {
        out.append(UInt8(0xC0 | (c >> 6)))
        out.append(UInt8(0x80 | (c & 0x3F)))
    } else if c < 0x10000 {
        out.append(UInt8(0xE0 | (c >> 12)))
        out.append(UInt8(0x80 | ((c >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (c & 0x3F)))
    } else {
        out.append(UInt8(0xF0 | ((c >> 18) & 0x07)))
        out.append(UInt8(0x80 | ((c >> 12) & 0x3F)))
        out.append(UInt8(0x80 | ((c >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (c & 0x3F)))
    }
}

/// The length of the UTF-8 sequence a lead byte announces, from its high four bits (llama.cpp's
/// `unicode_len_utf8`: a stray continuation byte counts as one).
@inline(__always)
func utf8SequenceLength(_ lead: UInt8) -> Int {
    switch lead >> 4 {
    case 0xC, 0xD: return 2
    case 0xE: return 3
    case 0xF: return 4
    default: return 1
    }
}
