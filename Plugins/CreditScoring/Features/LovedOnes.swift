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

    static func choose(_ contacts: [(name: String, pseudonym: String, stats: ContactStats)], totalMessages: Int)
        -> [LovedOne]
    {
        contacts.compactMap { contact in
            let s = contact.stats
            let indicators = s.kinship + s.endearment
            let share = totalMessages > 0 ? Double(s.total) / Double(totalMessages) : 0
            let reciprocity =
                max(s.fromMe, s.fromThem) > 0
                ? Double(min(s.fromMe, s.fromThem)) / Double(max(s.fromMe, s.fromThem)) : 0
            let byWords = indicators >= minimumIndicators && s.total >= minimumMessages
            let byPattern = share >= minimumShare && reciprocity >= minimumReciprocity && s.days.count >= minimumDays
            guard byWords || byPattern else { return nil }
            let label =
                s.relations.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.first?.key
                ?? "close contact"
            var reasons: [String] = []
            if s.kinship > 0 { reasons.append("kinship term ×\(s.kinship)") }
            if s.endearment > 0 { reasons.append("endearment ×\(s.endearment)") }
            reasons.append("\(Int((share * 100).rounded())) % of messages")
            reasons.append("reciprocity \(rounded(reciprocity, 2))")
            reasons.append("\(s.days.count) day\(s.days.count == 1 ? "" : "s")")
            return LovedOne(
                contact: contact.name, pseudonym: contact.pseudonym, label: label,
                explanation: "\(label): " + reasons.joined(separator: ", "))
        }
    }
}

/// `value` rounded to `places` decimals (for records and explanations: stable, short numbers).
func rounded(_ value: Double, _ places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (value * scale).rounded() / scale
}
