/// A message the user typed, prepared for plugins to recognise what it asks about (`FeaturePlugin.answer(to:)`).
///
/// Matching is on words after `normalizeArabic` (diacritics and tatweel gone, alef and hamza forms folded,
/// Arabic-Indic digits as ASCII), with ؤ → و, ئ → ي, English lowercased and punctuation as spaces. Each word is also
/// tried without a leading conjunction (و، ف) and article or preposition (ال، بال، لل، وال، …), so `وجوازي`,
/// `بالجواز` and `الجواز` all contain the word `جواز…`.
///
/// A keyword is one or more words. A keyword word ending in `*` matches any word that starts with it (`جواز*`
/// matches `جوازي`, `جوازات`); without `*` the word must match exactly (`متى`, `كم`), so short words do not match
/// inside longer ones.
public struct TypedQuestion: Sendable, Equatable {
    /// What the user typed.
    public let text: String
    /// The normalized words, in order.
    public let words: [String]
    /// The language to answer in: the text's (`ChatLanguage.of`), else `fallback`.
    public let language: ChatLanguage
    /// Each word's forms: itself, then without the prefixes above.
    let forms: [[String]]
    /// The link of the chat's last reply that had one, for a follow-up that names no subject of its own (`what is
    /// the late fine?` after an answer about a passport); nil at the start of a chat.
    public let previousLink: DeepLink?

    /// `fallback` is the chat's language, for a text with no letters (or as many Arabic as other ones).
    public init(_ text: String, fallback: ChatLanguage = .arabic, previousLink: DeepLink? = nil) {
        self.text = text
        self.previousLink = previousLink
        self.language = ChatLanguage.of(text) ?? fallback
        let words = Self.normalize(text).split(separator: " ").map(String.init)
        self.words = words
        self.forms = words.map(Self.forms(of:))
    }

    /// Whether one of `keywords` occurs.
    public func mentions(_ keywords: [String]) -> Bool {
        keywords.contains { mentions($0) }
    }

    /// Whether `keyword` (one or more words, `*` for a prefix) occurs.
    public func mentions(_ keyword: String) -> Bool {
        let parts = Self.normalize(keyword).split(separator: " ").map(String.init)
        guard !parts.isEmpty, parts.count <= words.count else { return false }
        for start in 0...(words.count - parts.count) {
            if parts.indices.allSatisfy({ Self.matches(forms[start + $0], parts[$0]) }) { return true }
        }
        return false
    }

    /// How many of `keywords` occur.
    public func count(_ keywords: [String]) -> Int {
        keywords.reduce(0) { $0 + (mentions($1) ? 1 : 0) }
    }

    static func matches(_ forms: [String], _ part: String) -> Bool {
        if part.hasSuffix("*") {
            let stem = String(part.dropLast())
            let stems = Self.forms(of: stem)
            return forms.contains { f in stems.contains { f.hasPrefix($0) } }
        }
        let exact = Self.forms(of: part)
        return forms.contains { exact.contains($0) }
    }

    /// The text as matched: `normalizeArabic`, ؤ → و, ئ → ي, lowercased, every character that is not a letter, a
    /// digit or `*` as a space.
    static func normalize(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in normalizeArabic(text).lowercased().unicodeScalars {
            switch scalar.value {
            case 0x0624: out.append("\u{0648}")
            case 0x0626: out.append("\u{064A}")
            default:
                let keep =
                    scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "*"
                out.append(keep ? scalar : " ")
            }
        }
        return String(out)
    }

    /// `word`, then without a leading و/ف (when 3+ letters remain), then without a leading article or preposition
    /// (ال، بال، لل، كال، فال، وال) when 2+ letters remain, or without a joined ل or ب when 3+ remain.
    static func forms(of word: String) -> [String] {
        var out = [word]
        var base = word
        if let first = base.first, first == "و" || first == "ف", base.count >= 4 {
            base.removeFirst()
            out.append(base)
        }
        for prefix in ["وال", "بال", "فال", "كال", "لل", "ال"]
        where base.hasPrefix(prefix) && base.count >= prefix.count + 2 {
            out.append(String(base.dropFirst(prefix.count)))
            break
        }
        // A preposition joined to a word (`لولدي`, `بجوازي`) when 3+ letters remain.
        if let first = base.first, first == "ل" || first == "ب", base.count >= 4, !base.hasPrefix("ال") {
            out.append(String(base.dropFirst()))
        }
        return out
    }
}

/// A plugin's answer to a typed message: a grounded reply (checked like a chip's) and how sure the plugin is that
/// the message is about what it answers. The chat keeps the answer with the highest `score`.
public struct TypedAnswer: Sendable, Equatable {
    /// Higher is surer; plugins use 1 for a topic word alone, 2 for a named subject, 3 for a named person.
    public var score: Double
    /// The reply, as for a tapped chip.
    public var reply: GroundedReply

    public init(score: Double, reply: GroundedReply) {
        self.score = score
        self.reply = reply
    }
}
