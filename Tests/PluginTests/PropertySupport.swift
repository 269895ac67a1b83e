import AbsherData
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

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
