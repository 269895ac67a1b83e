import Foundation

/// BERT's text preparation as Hugging Face `tokenizers` does it (`BertNormalizer`, then `BertPreTokenizer`), on
/// Unicode scalars (Rust's `char`):
///
/// 1. clean: NUL, U+FFFD and "other" characters (Cc, Cf, Cn, Co, Cs; not tab/newline/return) are dropped, White_Space
///    becomes a space;
/// 2. CJK ideographs get a space on either side;
/// 3. accents stripped (canonical decomposition, nonspacing marks dropped) — when lower-casing, as `strip_accents`
///    null means;
/// 4. lower-cased one scalar at a time (Rust's `char::to_lowercase`: no final-sigma rule);
/// 5. split on white space, every punctuation character (ASCII punctuation or Unicode P*) a word of its own.
struct BertPreTokenizer: Sendable {
    var lowercase: Bool
    var stripAccents: Bool
    var separateCJK: Bool

    /// The words of `text` (no special tokens in it), each as its scalars.
    func words(_ text: Substring) -> [[Unicode.Scalar]] {
        var cleaned = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if s.value == 0 || s.value == 0xFFFD || Self.isOther(s) { continue }
            if Self.isWhitespace(s) {
                cleaned.append(" ")
            } else if separateCJK && Self.isCJK(s) {
                cleaned.append(" ")
                cleaned.append(s)
                cleaned.append(" ")
            } else {
                cleaned.append(s)
            }
        }
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(cleaned.count)
        if stripAccents {
            for s in decomposed(String(cleaned)) where s.properties.generalCategory != .nonspacingMark {
                scalars.append(s)
            }
        } else {
            scalars.append(contentsOf: cleaned)
        }
        if lowercase {
            var lowered: [Unicode.Scalar] = []
            lowered.reserveCapacity(scalars.count)
            for s in scalars {
                if s.isASCII {
                    lowered.append(s.value >= 65 && s.value <= 90 ? Unicode.Scalar(s.value + 32) ?? s : s)
                } else {
                    lowered.append(contentsOf: s.properties.lowercaseMapping.unicodeScalars)
                }
            }
            scalars = lowered
        }
        var words: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        for s in scalars {
            if Self.isWhitespace(s) {
                if !current.isEmpty { words.append(current) }
                current = []
            } else if Self.isPunctuation(s) {
                if !current.isEmpty { words.append(current) }
                current = []
                words.append([s])
            } else {
                current.append(s)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// The canonical decomposition (NFD) of `text`, scalar by scalar.
    private func decomposed(_ text: String) -> [Unicode.Scalar] {
        Array(text.decomposedStringWithCanonicalMapping.unicodeScalars)
    }

    static func isWhitespace(_ s: Unicode.Scalar) -> Bool {
        s == "\t" || s == "\n" || s == "\r" || s.properties.isWhitespace
    }

    static func isOther(_ s: Unicode.Scalar) -> Bool {
        if s == "\t" || s == "\n" || s == "\r" { return false }
        switch s.properties.generalCategory {
        case .control, .format, .unassigned, .privateUse, .surrogate: return true
        default: return false
        }
    }

    static func isPunctuation(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if (33...47).contains(v) || (58...64).contains(v) || (91...96).contains(v) || (123...126).contains(v) {
            return true
        }
        switch s.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation:
            return true
        default: return false
        }
    }

    /// The CJK Unified Ideographs blocks BERT spaces out (not Hiragana, Katakana or Hangul).
    static func isCJK(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F, 0x2B740...0x2B81F,
            0x2B820...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default: return false
        }
    }
}
