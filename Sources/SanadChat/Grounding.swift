import Foundation
import SanadCore

/// What a plugin asks the engine when one of its suggestions is tapped, and how the host checks the answer.
///
/// Small models write poorly, so a plugin never trusts the generated text with facts: it grounds the prompt with
/// them (`messages`), names the facts the text must contain (`facts`) and the numbers it may contain
/// (`allowedNumbers`), and gives a template sentence (`fallback`) that says the same thing correctly. The host
/// streams the generated text, checks it (`GroundingCheck`), keeps it when the check passes and replaces it with
/// the fallback when it fails; either way the stored message ends with a note saying which happened. The deep link
/// is attached by the host, never generated.
public struct GroundedReply: Sendable, Equatable {
    /// The conversation to send to the engine (system prompt with the facts, then the request).
    public var messages: [ChatMessage]
    /// Facts the text must state.
    public var facts: [GroundingFact]
    /// Every number the text may contain (as digits; Arabic-Indic digits count as their ASCII value); nil = any.
    public var allowedNumbers: [String]?
    /// The language most letters of the text must be in (nil: any).
    public var requiredLanguage: ChatLanguage?
    /// Whether most letters of the text must be Arabic.
    public var requireArabic: Bool {
        get { requiredLanguage == .arabic }
        set { requiredLanguage = newValue ? .arabic : nil }
    }
    /// The correct reply as a template sentence, used when the check fails.
    public var fallback: String
    /// The link the reply carries.
    public var deepLink: DeepLink?

    public init(
        messages: [ChatMessage], facts: [GroundingFact], allowedNumbers: [String]? = nil, requireArabic: Bool = true,
        fallback: String, deepLink: DeepLink? = nil
    ) {
        self.init(
            messages: messages, facts: facts, allowedNumbers: allowedNumbers,
            language: requireArabic ? .arabic : nil, fallback: fallback, deepLink: deepLink)
    }

    /// A reply whose text must be mostly in `language` (nil: any).
    public init(
        messages: [ChatMessage], facts: [GroundingFact], allowedNumbers: [String]? = nil, language: ChatLanguage?,
        fallback: String, deepLink: DeepLink? = nil
    ) {
        self.messages = messages
        self.facts = facts
        self.allowedNumbers = allowedNumbers
        self.requiredLanguage = language
        self.fallback = fallback
        self.deepLink = deepLink
    }
}

/// A fact the generated text must state, in any of several accepted wordings.
public struct GroundingFact: Sendable, Equatable {
    /// What the fact is, in the user's language, for the note (`عدد الأيام المتبقية (45)`).
    public var name: String
    /// Wordings that count as stating it; matched after `normalizeArabic` on both sides, in any case.
    public var accepted: [String]

    public init(name: String, accepted: [String]) {
        self.name = name
        self.accepted = accepted
    }
}

/// The outcome of checking a generated text.
public enum GroundingVerdict: Sendable, Equatable {
    /// The text states every fact, has no foreign numbers and is in the required language.
    case verified(facts: [String])
    /// Why the text was not kept (worded by `ChatWording`, for the note).
    case rejected(reasons: [String])

    public var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }

    /// The note appended to the stored message, in `wording`.
    public func note(_ wording: ChatWording) -> String {
        switch self {
        case .verified(let facts): return wording.verifiedNote(facts)
        case .rejected(let reasons): return wording.rejectedNote(reasons)
        }
    }
}

/// Checks generated text against a `GroundedReply`.
public enum GroundingCheck {
    /// At most this share of the text's words may be words that neither the template, the facts' accepted wordings
    /// nor the user's message use. A fluent model that adds claims of its own ("it varies by country", "based on the
    /// market rate") states the facts and the allowed numbers, yet says something the data does not: its new words
    /// give it away. So does a model that reads its instructions back (Gemma 3 270M echoes the system message):
    /// the system message's words do not count as known. A quarter leaves room for a rewording's own small words.
    public static let maximumNovelShare = 0.25

    /// The words of `text` that `reply`'s template, accepted wordings and user message do not use, nor `common` (in
    /// order, each once).
    /// Words match after normalization and case folding, without a leading conjunction or article, or when they
    /// share a stem of 5 letters or one is a prefix of the other of 4 or more (`renew`, `renewal`, `renewing`).
    public static func novelWords(_ text: String, against reply: GroundedReply, common: [String] = []) -> [String] {
        let known = Set(
            (reply.messages.filter { $0.role != .system }.map(\.content) + [reply.fallback]
                + reply.facts.flatMap(\.accepted) + common).flatMap {
                    words(of: $0).flatMap(TypedQuestion.forms(of:))
                })
        let stems = Set(known.filter { $0.count >= 5 }.map { String($0.prefix(5)) })
        func isKnown(_ word: String) -> Bool {
            let forms = TypedQuestion.forms(of: word)
            if forms.contains(where: known.contains) { return true }
            return forms.contains { form in
                (form.count >= 5 && stems.contains(String(form.prefix(5))))
                    || (form.count >= 4
                        && known.contains { $0.count >= 4 && ($0.hasPrefix(form) || form.hasPrefix($0)) })
            }
        }
        var novel: [String] = []
        for word in words(of: text) where !isKnown(word) && !novel.contains(word) { novel.append(word) }
        return novel
    }

    /// The words of `text` as matched (`TypedQuestion.normalize`): letters only, digits dropped.
    static func words(of text: String) -> [String] {
        TypedQuestion.normalize(text).split(separator: " ").map(String.init).filter {
            $0.unicodeScalars.contains { $0.properties.isAlphabetic }
        }
    }

    /// Share of letters that must be in the required language (Arabic letters for Arabic, the others for
    /// English).
    public static let minimumArabicShare = 0.6

    /// The verdict on `text`; failure reasons are worded by `wording`.
    public static func verify(
        _ text: String, against reply: GroundedReply, wording: ChatWording = ChatWording()
    ) -> GroundingVerdict {
        let normalized = normalizeArabic(text)
        var reasons: [String] = []
        if normalized.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return .rejected(reasons: [wording.emptyText])
        }
        // Case does not matter (English wordings start a sentence or not).
        let folded = normalized.lowercased()
        for fact in reply.facts
        where !fact.accepted.contains(where: { folded.contains(normalizeArabic($0).lowercased()) }) {
            reasons.append(wording.missingFact(fact.name))
        }
        if let allowed = reply.allowedNumbers {
            let allowedSet = Set(allowed.map { canonicalNumber(normalizeArabic($0)) })
            var foreign: [String] = []
            for number in digitRuns(normalized) where !allowedSet.contains(canonicalNumber(number)) {
                if !foreign.contains(number) { foreign.append(number) }
            }
            if !foreign.isEmpty { reasons.append(wording.foreignNumbers(foreign)) }
        }
        let novel = novelWords(text, against: reply, common: wording.commonWords)
        if Double(novel.count) > maximumNovelShare * Double(max(1, words(of: text).count)) {
            reasons.append(wording.unsupportedWords(novel))
        }
        let share = arabicLetterShare(text)
        switch reply.requiredLanguage {
        case .arabic where share < minimumArabicShare:
            reasons.append(wording.notArabic(Int((share * 100).rounded())))
        case .english where 1 - share < minimumArabicShare:
            reasons.append(wording.notEnglish(Int((share * 100).rounded())))
        default: break
        }
        return reasons.isEmpty ? .verified(facts: reply.facts.map(\.name)) : .rejected(reasons: reasons)
    }
}

/// Text for matching: Arabic-Indic and Eastern Arabic-Indic digits become ASCII digits, alef forms (أ إ آ ٱ)
/// become ا, ى becomes ي, ة becomes ه, and tatweel and short-vowel marks are removed.
public func normalizeArabic(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x0660...0x0669: out.append(Unicode.Scalar(UInt8(scalar.value - 0x0660 + 0x30)))
        case 0x06F0...0x06F9: out.append(Unicode.Scalar(UInt8(scalar.value - 0x06F0 + 0x30)))
        case 0x0622, 0x0623, 0x0625, 0x0671: out.append("\u{0627}")
        case 0x0649: out.append("\u{064A}")
        case 0x0629: out.append("\u{0647}")
        case 0x0640, 0x064B...0x0652, 0x0670: continue
        default: out.append(scalar)
        }
    }
    return String(out)
}

/// Maximal runs of ASCII digits, in order.
public func digitRuns(_ text: String) -> [String] {
    var runs: [String] = []
    var current = ""
    for scalar in text.unicodeScalars {
        if scalar.value >= 0x30 && scalar.value <= 0x39 {
            current.unicodeScalars.append(scalar)
        } else if !current.isEmpty {
            runs.append(current)
            current = ""
        }
    }
    if !current.isEmpty { runs.append(current) }
    return runs
}

/// `007` → `7`; `0` stays `0`.
func canonicalNumber(_ digits: String) -> String {
    let trimmed = digits.drop { $0 == "0" }
    return trimmed.isEmpty ? (digits.isEmpty ? "" : "0") : String(trimmed)
}

/// Share of the letters of `text` that are in the Arabic blocks (0 when there are no letters).
public func arabicLetterShare(_ text: String) -> Double {
    var letters = 0
    var arabic = 0
    for scalar in text.unicodeScalars where scalar.properties.isAlphabetic {
        letters += 1
        if isArabicLetter(scalar) { arabic += 1 }
    }
    return letters == 0 ? 0 : Double(arabic) / Double(letters)
}

/// The context of a reply that plugins may follow up on.
public struct ReplyContext: Sendable, Equatable {
    /// The suggestion that was tapped, or nil for typed text.
    public var suggestion: ChatSuggestion?
    /// What the user sent (the chip text for a tap).
    public var userText: String
    /// The reply as stored.
    public var reply: ChatEntry
    /// Every message so far, the reply last (so a plugin can tell what it has already said).
    public var history: [ChatEntry]
    /// The language of the reply, which follow-ups keep.
    public var language: ChatLanguage

    public init(
        suggestion: ChatSuggestion?, userText: String, reply: ChatEntry, history: [ChatEntry] = [],
        language: ChatLanguage = .arabic
    ) {
        self.suggestion = suggestion
        self.userText = userText
        self.reply = reply
        self.history = history
        self.language = language
    }
}

/// A message a plugin adds after a reply; the host gives it an id and a timestamp.
public struct ChatFollowUp: Sendable, Equatable {
    public var content: String
    public var deepLink: DeepLink?

    public init(content: String, deepLink: DeepLink? = nil) {
        self.content = content
        self.deepLink = deepLink
    }
}
