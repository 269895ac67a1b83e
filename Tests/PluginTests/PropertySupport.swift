import AbsherData
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import Testing

/// SplitMix64: a small, fast, seedable generator, so every property case can be replayed from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func bool(_ probability: Double = 0.5) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// A string of `length` characters drawn from `alphabet`.
    mutating func string(from alphabet: [Character], length: ClosedRange<Int>) -> String {
        let n = int(length)
        var s = ""
        for _ in 0..<n { s.append(pick(alphabet)) }
        return s
    }
}

/// Character pools for generated text.
enum Alphabet {
    static let arabic = Array("ابتثجحخدذرزسشصضطظعغفقكلمنهويءأإآةى")
    static let latin = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let digits = Array("0123456789")
    static let arabicDigits = Array("٠١٢٣٤٥٦٧٨٩")
    static let serviceType = Array("abcdefghijklmnopqrstuvwxyz0123456789_")
    /// URL and JSON metacharacters, whitespace, escapes, marks and astral characters.
    static let tricky = Array("&=?%+/#: \"\\\n\t{}[]<>'.-_~،؛ًٌَُِّْـ😀🚗👨‍👩‍👧é\u{0301}\u{200F}")
    static let any = arabic + latin + digits + arabicDigits + tricky
}

/// Runs `body` for `cases` cases, each with its own generator seeded from `seed` and the case number; a failing
/// case's number and seed are in the failure message (`Case.label`).
func forAll(
    cases: Int = 200, seed: UInt64 = 0x5A4E_4144, _ body: (inout SeededGenerator, Case) throws -> Void
) rethrows {
    for i in 0..<cases {
        let caseSeed = seed &+ UInt64(i) &* 0x2545_F491_4F6C_DD1D
        var rng = SeededGenerator(seed: caseSeed)
        try body(&rng, Case(index: i, seed: caseSeed))
    }
}

func forAll(
    cases: Int = 200, seed: UInt64 = 0x5A4E_4144, _ body: (inout SeededGenerator, Case) async throws -> Void
) async rethrows {
    for i in 0..<cases {
        let caseSeed = seed &+ UInt64(i) &* 0x2545_F491_4F6C_DD1D
        var rng = SeededGenerator(seed: caseSeed)
        try await body(&rng, Case(index: i, seed: caseSeed))
    }
}

/// Which generated case is running, for failure messages.
struct Case: CustomStringConvertible {
    let index: Int
    let seed: UInt64
    var description: String { "case \(index) (seed 0x\(String(seed, radix: 16)))" }
    var label: Comment { Comment(rawValue: description) }
}

/// Riyadh, where "today" is taken.
let riyadh = ProactiveAlertsPlugin.defaultTimeZone

/// The sample's reference day, 2026-11-22 at 09:00 in Riyadh.
let sampleNow = Date(timeIntervalSince1970: 1_795_327_200)

/// A random instant between 2020 and 2035.
func randomNow(_ rng: inout SeededGenerator) -> Date {
    Date(timeIntervalSince1970: Double(rng.int(1_577_836_800...2_051_222_400)))
}

let arabicNames = ["حسام", "سارة", "محمد", "نورة", "عبدالرحمن", "ريم", "فيصل", "لمى"]
let relationships = ["ولدك", "بنتك", "زوجتك", "أخوك", "والدتك"]
let dependentServices = ["اصدار رخصة", "تجديد جواز السفر", "تجديد الهوية", "اصدار هوية"]

/// A user data file as JSON: documents of every type expiring around `today`, and dependents some of which lack a
/// field (when `incomplete` allows).
func randomUserJSON(_ rng: inout SeededGenerator, today: CivilDate, incomplete: Bool = true) -> JSONValue {
    var documents: [JSONValue] = []
    for i in 0..<rng.int(0...6) {
        var o: [String: JSONValue] = [
            "id": .string("doc\(i)-" + rng.string(from: Alphabet.latin + Alphabet.digits, length: 1...6)),
            "type": .string(rng.pick(DocumentType.allCases).rawValue),
            "expiryDate": .string(today.adding(days: rng.int(-60...200)).description),
        ]
        if rng.bool(0.7) { o["number"] = .string(rng.string(from: Alphabet.digits, length: 6...10)) }
        if rng.bool(0.6) { o["renewalFeeSAR"] = .number(Double(rng.int(0...900))) }
        documents.append(.object(o))
    }
    var dependents: [JSONValue] = []
    for i in 0..<rng.int(0...6) {
        var o: [String: JSONValue] = [
            "id": .string("dep\(i)"),
            "name": .string(rng.bool(0.8) ? rng.pick(arabicNames) : rng.string(from: Alphabet.arabic, length: 2...9)),
            "relationship": .string(rng.pick(relationships)),
            "service": .string(rng.pick(dependentServices)),
            "dueDate": .string(today.adding(days: rng.int(-30...200)).description),
        ]
        if rng.bool(0.3) { o["gender"] = .string("female") }
        if incomplete && rng.bool(0.25) {
            let key = rng.pick(["name", "relationship", "service", "dueDate"])
            switch rng.int(0...2) {
            case 0: o[key] = nil
            case 1: o[key] = .string("  ")
            default: o[key] = key == "dueDate" ? .string("2027-13-45") : .number(7)
            }
        }
        dependents.append(.object(o))
    }
    return .object(["documents": .array(documents), "dependents": .array(dependents)])
}

let generatedFile = URL(fileURLWithPath: "/generated/user.json")
