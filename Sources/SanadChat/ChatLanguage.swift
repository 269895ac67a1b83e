/// The languages a chat answers in. A reply follows the language of the message it answers (`of(_:)`); the chat's
/// own language (`ChatConfiguration.language`, `--lang`) sets the greeting, the suggestions and the pages, and
/// answers a message that has no letters.
public enum ChatLanguage: String, Sendable, CaseIterable, Codable {
    case arabic = "ar"
    case english = "en"

    /// The language of `text` by the majority of its letters: Arabic-script letters count for Arabic, every other
    /// letter for English; nil when it has no letters or as many of each (the chat's language decides).
    public static func of(_ text: String) -> ChatLanguage? {
        var arabic = 0
        var other = 0
        for scalar in text.unicodeScalars where scalar.properties.isAlphabetic {
            if isArabicLetter(scalar) { arabic += 1 } else { other += 1 }
        }
        if arabic == other { return nil }
        return arabic > other ? .arabic : .english
    }

    /// The language a code names (`ar`, `en`), or nil; for `--lang`.
    public init?(code: String) {
        self.init(rawValue: code.lowercased())
    }

    /// Every code, for usage errors (`ar|en`).
    public static var codes: String { allCases.map(\.rawValue).joined(separator: "|") }
}

/// Whether `scalar` is in one of the Arabic blocks.
func isArabicLetter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: return true
    default: return false
    }
}
