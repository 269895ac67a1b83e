import SanadSigning

/// Word categories the feature pass counts. A word may be in several.
public struct WordCategory: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Money matters: loan, rent, salary, debt / قرض، إيجار، راتب، دين.
    public static let financial = WordCategory(rawValue: 1 << 0)
    /// A commitment: promise, will, tomorrow / وعد، بكرة، سأدفع.
    public static let promise = WordCategory(rawValue: 1 << 1)
    /// Something was paid or sent: paid, transferred / دفعت، حولت.
    public static let settled = WordCategory(rawValue: 1 << 2)
    /// Something is still owed: still, waiting, overdue / لسه، متأخر.
    public static let unsettled = WordCategory(rawValue: 1 << 3)
    /// Family: mom, brother / أمي، أخي.
    public static let kinship = WordCategory(rawValue: 1 << 4)
    /// Affection: love, dear, habibi / حبيبي، قلبي.
    public static let endearment = WordCategory(rawValue: 1 << 5)
    /// Thanks, joy: thanks, happy / شكرا، سعيد.
    public static let positive = WordCategory(rawValue: 1 << 6)
    /// Worry, sadness, anger: sorry, worried / قلق، زعلان.
    public static let negative = WordCategory(rawValue: 1 << 7)
    /// Meeting people: party, visit / حفلة، نطلع.
    public static let social = WordCategory(rawValue: 1 << 8)
    /// New things: idea, learn, travel / فكرة، سفر.
    public static let novelty = WordCategory(rawValue: 1 << 9)

    public static let named: [(String, WordCategory)] = [
        ("financial", .financial), ("promise", .promise), ("settled", .settled), ("unsettled", .unsettled),
        ("kinship", .kinship), ("endearment", .endearment), ("positive", .positive), ("negative", .negative),
        ("social", .social), ("novelty", .novelty),
    ]
}

/// The English and Arabic word lists (written for Sanad), keyed by a hash of the normalised word (see `WordHash`).
/// Arabic words are matched after normalisation (أ إ آ → ا, ة → ه, ى → ي, diacritics and tatweel removed) and
/// with one prefix (و، ف، ب، ل، ال، وال، بال، لل) stripped when the whole word is not listed.
public enum Lexicon {
    /// SHA-256 (hex) of `words` in a fixed text form (each category by name in `WordCategory.named` order, then its
    /// words sorted, one a line): a record names the lexicon it was computed with, and changes with any word.
    public static func digest(lib: LibCrypto) throws -> String { try digest(words, lib: lib) }

    /// The digest of another word list (tests).
    public static func digest(_ words: [WordCategory: [String]], lib: LibCrypto) throws -> String {
        let text = WordCategory.named.map { name, category in
            "[\(name)]\n" + (words[category] ?? []).sorted().joined(separator: "\n")
        }.joined(separator: "\n")
        return try SHA256Digest.hex(Array(text.utf8), lib: lib)
    }

    public static let words: [WordCategory: [String]] = [
        .financial: [
            "loan", "loans", "lend", "lent", "borrow", "borrowed", "rent", "salary", "paycheck", "wage", "repay",
            "repaid", "repayment", "debt", "debts", "owe", "owed", "owes", "money", "pay", "payment", "installment",
            "instalment", "bank", "transfer", "cash", "bill", "bills", "credit", "dollars", "riyal", "riyals", "sar",
            "قرض", "قروض", "سلف", "سلفه", "سلفني", "ايجار", "اجار", "راتب", "رواتب", "سداد", "اسدد", "سدد", "دين",
            "ديون", "مديون", "فلوس", "مبلغ", "قسط", "اقساط", "تحويل", "حواله", "ريال", "فاتوره", "بنك", "ادفع",
            "دفع", "سلفتك",
        ],
        .promise: [
            "promise", "promised", "will", "i'll", "ill", "tomorrow", "soon", "next", "week", "month", "guarantee",
            "وعد", "اوعدك", "وعدتك", "بكره", "بكرا", "غدا", "قريب", "سوف", "ساسدد", "سادفع", "احولك", "ارجعها",
            "الاسبوع", "الشهر", "ان", "شاء",
        ],
        .settled: [
            "paid", "sent", "transferred", "repaid", "returned", "settled", "done", "received", "دفعت", "حولت",
            "حولتلك", "سددت", "رجعت", "ارسلت", "وصلك", "استلمت", "وصلني", "خلصت",
        ],
        .unsettled: [
            "still", "waiting", "late", "overdue", "didn't", "didnt", "haven't", "havent", "never", "where's",
            "reminder", "remind", "unpaid", "لسه", "لسا", "متاخر", "تاخير", "ماحولت", "ماوصل", "وين", "انتظر",
            "ذكرك", "تذكير", "للحين",
        ],
        .kinship: [
            "mom", "mum", "mother", "mama", "dad", "father", "baba", "papa", "sister", "sis", "brother", "bro", "son",
            "daughter", "aunt", "auntie", "uncle", "grandma", "grandpa", "grandmother", "grandfather", "wife",
            "husband", "cousin", "امي", "ماما", "يمه", "امه", "ابي", "بابا", "يبه", "ابوي", "اختي", "اخوي", "اخي",
            "ابني", "بنتي", "خالتي", "عمتي", "خالي", "عمي", "جدتي", "جدي", "زوجتي", "زوجي", "ولدي",
        ],
        .endearment: [
            "love", "dear", "darling", "honey", "sweetheart", "habibi", "habibti", "miss", "xoxo", "hugs", "حبيبي",
            "حبيبتي", "عزيزي", "عزيزتي", "قلبي", "روحي", "غالي", "غاليه", "اشتقت", "وحشتني", "احبك", "عمري",
        ],
        .positive: [
            "thanks", "thank", "happy", "great", "glad", "wonderful", "congrats", "congratulations", "appreciate",
            "شكرا", "مشكور", "الحمدلله", "سعيد", "مبسوط", "جميل", "رائع", "مبروك", "يعطيك", "العافيه",
        ],
        .negative: [
            "sorry", "sad", "angry", "worried", "worry", "stress", "stressed", "upset", "hate", "afraid", "tired",
            "anxious", "اسف", "اسفه", "زعلان", "زعلانه", "حزين", "قلق", "قلقان", "متضايق", "خايف", "تعبان", "مقهور",
        ],
        .social: [
            "party", "meet", "visit", "dinner", "lunch", "coffee", "friends", "together", "join", "invite", "حفله",
            "نطلع", "نلتقي", "زياره", "عشاء", "غداء", "قهوه", "الشباب", "تعال", "عزيمه", "دعوه",
        ],
        .novelty: [
            "new", "idea", "ideas", "learn", "learning", "travel", "book", "music", "art", "curious", "explore",
            "course", "جديد", "فكره", "افكار", "اتعلم", "سفر", "كتاب", "موسيقى", "فن", "دوره", "تجربه",
        ],
    ]

    /// Relationship labels for explanations: the kinship word → `mother`, `father`, ….
    static let relations: [String: String] = [
        "mom": "mother", "mum": "mother", "mother": "mother", "mama": "mother", "امي": "mother", "ماما": "mother",
        "يمه": "mother", "dad": "father", "father": "father", "baba": "father", "papa": "father", "ابي": "father",
        "بابا": "father", "يبه": "father", "ابوي": "father", "sister": "sister", "sis": "sister", "اختي": "sister",
        "brother": "brother", "bro": "brother", "اخوي": "brother", "اخي": "brother", "son": "son", "ابني": "son",
        "ولدي": "son", "daughter": "daughter", "بنتي": "daughter", "wife": "wife", "زوجتي": "wife",
        "husband": "husband", "زوجي": "husband",
    ]

    /// Relationships whose words are said to anyone close (`bro`, `sis`, `يا أخي`, `اختي`): only a contact's name
    /// gives them, never a message.
    static let casualRelations: Set<String> = ["brother", "sister"]

    /// Category bits by word hash.
    static let table: [UInt64: WordCategory] = {
        var table: [UInt64: WordCategory] = [:]
        for (category, list) in words {
            for word in list { table[WordHash.of(word), default: []].insert(category) }
        }
        return table
    }()

    /// Relation label by word hash.
    static let relationTable: [UInt64: String] = Dictionary(
        relations.map { (WordHash.of($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
}
