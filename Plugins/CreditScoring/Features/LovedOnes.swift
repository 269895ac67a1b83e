/// A close contact and why: frequency, reciprocity, time spread and kinship/endearment words.
public struct LovedOne: Sendable, Equatable {
    /// The contact's name as the input gives it (shown locally; the signed record uses `pseudonym`).
    public var contact: String
    /// `c1`, `c2`, … by message count: how the record names contacts.
    public var pseudonym: String
    /// `mother`, `brother`, … from kinship words, else `close contact`.
    public var label: String
    /// `mother: kinship term ×14, 31 % of messages, reciprocity 0.82, 45 days` (no message text).
    public var explanation: String
    /// Where the label comes from: `named` (the contact's name says it), `addressed` (my messages open with it,
    /// e.g. `Mom, …`), else `pattern` (frequency, reciprocity, days, warm words: a close contact, no relationship).
    public var signal: String
    /// `high` (named), `medium` (addressed at least twice), `low` (pattern).
    public var confidence: String
    /// The messages behind the label (the addressing ones; the warm ones for a close contact), at most five.
    public var messageIDs: [String]
}

/// The loved-ones rule (see README.md): a contact is close when relationship words appear at least
/// `minimumIndicators` times in at least `minimumMessages` messages, or when the contact has at least
/// `minimumShare` of all messages, answers both ways (reciprocity ≥ `minimumReciprocity`) and spans at least
/// `minimumDays` distinct days.
enum LovedOnesRule {
    static let minimumIndicators = 3
    static let minimumMessages = 4
    static let minimumShare = 0.10
    static let minimumReciprocity = 0.3
    static let minimumDays = 7
    /// My messages that must address a contact by a relationship before it is the contact's label.
    static let minimumAddresses = 2

    /// The relationship a contact's name states (`Mom`, `أمي`, `Ahmad (brother)`), or nil.
    static func relation(inName name: String) -> String? {
        var scanner = WordScanner()
        var found: String?
        _ = scanner.scan(name) { categories, hash in
            if found == nil, categories.contains(.kinship) { found = Lexicon.relationTable[hash] }
        }
        return found
    }

    /// `stated`: relationships the person gave (`--contacts`), by contact name or number: they win over the
    /// guess (signal `stated`, confidence `high`) and make the contact a loved one.
    static func choose(
        _ contacts: [(name: String, pseudonym: String, stats: ContactStats)], totalMessages: Int,
        stated: [String: String] = [:]
    ) -> [LovedOne] {
        contacts.compactMap { contact in
            let s = contact.stats
            let indicators = s.kinship + s.endearment
            let share = totalMessages > 0 ? Double(s.total) / Double(totalMessages) : 0
            let reciprocity =
                max(s.fromMe, s.fromThem) > 0
                ? Double(min(s.fromMe, s.fromThem)) / Double(max(s.fromMe, s.fromThem)) : 0
            let byWords = indicators >= minimumIndicators && s.total >= minimumMessages
            let byPattern = share >= minimumShare && reciprocity >= minimumReciprocity && s.days.count >= minimumDays
            let statedRelation = stated[contact.name]
            guard byWords || byPattern || statedRelation != nil else { return nil }
            // A relationship only from the contact's name, or from my messages that address them by it.
            let fromName = Self.relation(inName: contact.name)
            let addressedBy = s.addressed.filter { $0.value >= minimumAddresses }
                .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.first
            let label: String
            let signal: String
            let confidence: String
            let evidence: [String]
            if let statedRelation {
                (label, signal, confidence, evidence) = (statedRelation, "stated", "high", [])
            } else if let fromName {
                (label, signal, confidence, evidence) = (fromName, "named", "high", [])
            } else if let (relation, count) = addressedBy {
                (label, signal, confidence) = (relation, "addressed ×\(count)", "medium")
                evidence = s.examples["addressed:" + relation]?.items.map(\.id) ?? []
            } else {
                (label, signal, confidence) = ("close contact", "pattern", "low")
                evidence = s.examples["closeness"]?.items.map(\.id) ?? []
            }
            var reasons: [String] = []
            if s.kinship > 0 { reasons.append("kinship term ×\(s.kinship)") }
            if s.endearment > 0 { reasons.append("endearment ×\(s.endearment)") }
            reasons.append("\(Int((share * 100).rounded())) % of messages")
            reasons.append("reciprocity \(rounded(reciprocity, 2))")
            reasons.append("\(s.days.count) day\(s.days.count == 1 ? "" : "s")")
            return LovedOne(
                contact: contact.name, pseudonym: contact.pseudonym, label: label,
                explanation: "\(label) (\(signal)): " + reasons.joined(separator: ", "),
                signal: signal.split(separator: " ").first.map(String.init) ?? signal,
                confidence: confidence, messageIDs: evidence)
        }
    }
}

/// `value` rounded to `places` decimals (for records and explanations: stable, short numbers).
func rounded(_ value: Double, _ places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (value * scale).rounded() / scale
}
