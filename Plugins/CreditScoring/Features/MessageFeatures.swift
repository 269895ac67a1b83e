/// What the feature pass takes from one message: word counts per category, a relationship word, punctuation.
/// The text itself is not kept.
struct MessageFeatures: Sendable {
    /// Words per category, indexed by the category's bit (see `WordCategory.named`).
    var counts = SIMD16<UInt16>()
    var words: Int = 0
    var questions: Int = 0
    var exclamations: Int = 0
    /// The lexicon hash of the first relationship word (`mom` → mother), or 0.
    var relation: UInt64 = 0
    /// The relationship word the message opens with, as an address (`Mom, …`, `يا أمي …`), or 0: a kinship word
    /// that refers to the person written to, not to someone else.
    var address: UInt64 = 0

    func has(_ category: WordCategory) -> Bool { count(category) > 0 }

    func count(_ category: WordCategory) -> Int {
        Int(counts[category.rawValue.trailingZeroBitCount])
    }

    static func of(_ text: String, scanner: inout WordScanner) -> MessageFeatures {
        var f = MessageFeatures()
        f.words = scanner.scan(text) { categories, hash in
            var bits = categories.rawValue
            while bits != 0 {
                let i = bits.trailingZeroBitCount
                f.counts[i] &+= 1
                bits &= bits - 1
            }
            if categories.contains(.kinship), f.relation == 0, Lexicon.relationTable[hash] != nil { f.relation = hash }
        }
        if f.relation != 0 {
            // Only the first two words can address the reader ("يا" + the word, or the word alone).
            let head = text.split(whereSeparator: { $0.isWhitespace }).prefix(2).joined(separator: " ")
            _ = scanner.scan(head) { categories, hash in
                if categories.contains(.kinship), f.address == 0, Lexicon.relationTable[hash] != nil {
                    f.address = hash
                }
            }
        }
        for byte in text.utf8 {
            if byte == UInt8(ascii: "?") { f.questions += 1 } else if byte == UInt8(ascii: "!") { f.exclamations += 1 }
        }
        return f
    }
}
