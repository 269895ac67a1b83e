/// A message id with its input line, so that examples merged from several contacts stay in input order.
struct Example: Sendable, Comparable, Codable {
    var line: Int
    var id: String
    static func < (a: Example, b: Example) -> Bool { a.line < b.line }
}

/// The first few examples of one feature (bounded: explanations cite at most `limit` ids).
struct Examples: Sendable, Codable {
    static let limit = 5
    private(set) var items: [Example] = []
    mutating func add(_ example: Example) { if items.count < Self.limit { items.append(example) } }
    static func merged(_ all: [Examples]) -> [String] {
        var seen = Set<Int>()
        return Array(all.flatMap(\.items).sorted().filter { seen.insert($0.line).inserted }.prefix(limit).map(\.id))
    }
}

/// Everything the feature pass keeps about one contact: sums, never text. Personal totals are sums over the
/// contacts in scope, so "loved ones only" needs no second pass over the input.
struct ContactStats: Sendable, Codable {
    var fromMe = 0
    var fromThem = 0
    /// My words per category and in all.
    var myCounts = SIMD16<Int>()
    var myWords = 0
    var myQuestions = 0
    var myExclamations = 0
    /// Conversations I started (my message after 6 hours of silence).
    var initiated = 0
    /// Kinship and endearment words in either direction.
    var kinship = 0
    var endearment = 0
    /// My messages that address this contact by a relationship (`mother`: `Mom, …`), by label; casual ones
    /// (`bro`, `يا أخي`, said to friends as much as to brothers) are left out: they never name a relationship.
    var addressed: [String: Int] = [:]
    var firstDate = Int64.max
    var lastDate = Int64.min
    var days = Set<Int64>()
    /// Weeks (since 1970) with a message of mine.
    var myWeeks = Set<Int64>()
    var promisesMade = 0
    var promisesKept = 0
    var promisesBroken = 0
    var openPromise: Example?
    var openPromiseDate: Int64 = 0
    var examples: [String: Examples] = [:]

    static let promiseDeadline: Int64 = 30 * 86_400
    static let conversationGap: Int64 = 6 * 3600

    mutating func add(_ message: Message, _ f: MessageFeatures) {
        let example = Example(line: message.line, id: message.id)
        if message.date - openPromiseDate > Self.promiseDeadline, openPromise != nil { breakPromise() }
        if message.isFromMe {
            fromMe += 1
            if fromMe + fromThem == 1 || message.date - lastDate > Self.conversationGap {
                initiated += 1
                examples["initiated", default: Examples()].add(example)
            }
            myCounts &+= SIMD16<Int>(truncatingIfNeeded: f.counts)
            myWords += f.words
            myQuestions += f.questions
            myExclamations += f.exclamations
            myWeeks.insert(Self.floorDiv(message.date, 7 * 86_400))
            for (name, category) in WordCategory.named where f.has(category) {
                examples[name, default: Examples()].add(example)
            }
            if f.has(.settled), openPromise != nil, f.has(.financial) || f.has(.promise) || f.words <= 6 {
                promisesKept += 1
                examples["promisesKept", default: Examples()].add(example)
                openPromise = nil
            } else if f.has(.promise), f.has(.financial), !f.has(.settled), openPromise == nil {
                promisesMade += 1
                openPromise = example
                openPromiseDate = message.date
                examples["promisesMade", default: Examples()].add(example)
            }
        } else {
            fromThem += 1
            if f.has(.unsettled), openPromise != nil, f.has(.financial) || f.has(.promise) {
                breakPromise(reason: example)
            }
        }
        kinship += f.count(.kinship)
        endearment += f.count(.endearment)
        if f.has(.kinship) || f.has(.endearment) { examples["closeness", default: Examples()].add(example) }
        if message.isFromMe, f.address != 0, let label = Lexicon.relationTable[f.address],
            !Lexicon.casualRelations.contains(label)
        {
            addressed[label, default: 0] += 1
            examples["addressed:" + label, default: Examples()].add(example)
        }
        firstDate = min(firstDate, message.date)
        lastDate = max(lastDate, message.date)
        days.insert(Self.floorDiv(message.date, 86_400))
    }

    /// At the end of the input: a promise older than the deadline at the last message seen is broken.
    mutating func finish(lastInputDate: Int64) {
        if openPromise != nil, lastInputDate - openPromiseDate > Self.promiseDeadline { breakPromise() }
    }

    private mutating func breakPromise(reason: Example? = nil) {
        guard let promise = openPromise else { return }
        promisesBroken += 1
        examples["promisesBroken", default: Examples()].add(reason ?? promise)
        openPromise = nil
    }

    var total: Int { fromMe + fromThem }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }
}

extension ContactStats {
    /// The personal totals over `contacts` (in the order given: callers sort them, so sums are reproducible).
    static func sum(_ contacts: [ContactStats]) -> ContactStats {
        var total = ContactStats()
        for c in contacts {
            total.fromMe += c.fromMe
            total.fromThem += c.fromThem
            total.myCounts &+= c.myCounts
            total.myWords += c.myWords
            total.myQuestions += c.myQuestions
            total.myExclamations += c.myExclamations
            total.initiated += c.initiated
            total.kinship += c.kinship
            total.endearment += c.endearment
            total.firstDate = min(total.firstDate, c.firstDate)
            total.lastDate = max(total.lastDate, c.lastDate)
            total.days.formUnion(c.days)
            total.myWeeks.formUnion(c.myWeeks)
            total.promisesMade += c.promisesMade
            total.promisesKept += c.promisesKept
            total.promisesBroken += c.promisesBroken
        }
        let keys = Set(contacts.flatMap(\.examples.keys))
        for key in keys {
            var merged = Examples()
            for id in contacts.compactMap({ $0.examples[key] }).flatMap(\.items).sorted().prefix(Examples.limit) {
                merged.add(id)
            }
            total.examples[key] = merged
        }
        return total
    }
}
