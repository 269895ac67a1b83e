import FormsPlugin
import Foundation
import SanadCore
import Testing

/// The DMV renewal in every state and DC (issue 36): each row of dmvStates.json exercised — the state named by code
/// and in English, Arabic and Spanish, a ZIP code inside its prefixes and one outside, the licence-number format
/// where the table has one, and every fact the table marks unknown shown as unknown, never guessed.
@Suite("DMV renewal: every state and DC")
struct DMVStatesTests {
    static let template = try! FormsFixture.catalog().template("dmv-renewal")
    static var lookup: FormTemplate.Lookup { template.metadata.lookup! }

    static func start(language: String = "en") throws -> FormSession {
        try FormSession.start(
            template: template, store: MemoryFormStore(), language: language, today: FormsFixture.today)
    }

    /// Answers `text` to the current question; the outcome.
    static func answer(_ s: inout FormSession, _ text: String) throws -> AnswerOutcome {
        guard let q = s.nextQuestion else { throw FormError.invalidRequest("no question for '\(text)'") }
        return try s.apply(FormProposal(fieldID: q.field.id, value: text))
    }

    /// A ZIP code inside the first prefix range of `code`, and one from another state.
    static func zips(_ code: String) -> (inside: String, outside: String) {
        let ranges = lookup.entries[code]?["zipPrefixes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let low = ranges.first?.split(separator: "-").first.map(String.init) ?? "000"
        return (low + "01", code == "AK" ? "10001" : "99501")
    }

    @Test("the table has the 50 states and DC, each with its official page, ZIP prefixes, sources and as-of date")
    func table() {
        #expect(Self.lookup.entries.count == 51)
        for (code, entry) in Self.lookup.entries {
            #expect(entry["officialUrl"]?.stringValue?.hasPrefix("https://") == true, "\(code)")
            #expect(entry["zipPrefixes"]?.arrayValue?.isEmpty == false, "\(code)")
            #expect(entry["sources"]?.objectValue?.isEmpty == false && entry["asOf"]?.stringValue != nil, "\(code)")
        }
    }

    @Test(
        "each state: named four ways, ZIP inside and outside, licence format, unknown facts listed", arguments: 0..<51)
    func state(index: Int) throws {
        let code = Self.lookup.entries.keys.sorted()[index]
        let entry = try #require(Self.lookup.entries[code])
        let name = try #require(entry["name"]?.stringValue)
        let validator = FieldValidator(today: FormsFixture.today)
        let field = try #require(Self.template.field("state"))
        for form in [code, code.lowercased(), name, name.uppercased()] {
            #expect(try validator.normalize(form, for: field).get() == code, "\(form)")
        }
        let languages = ["en", "ar", "es"]
        let language = languages[index % 3]
        var s = try Self.start(language: language)
        _ = try Self.answer(&s, "yes")
        // The state named in the session's language.
        let spoken = try #require(USStates.name(code, language: language))
        guard case .saved(_, let saved, _) = try Self.answer(&s, spoken) else {
            Issue.record("\(code): '\(spoken)' refused")
            return
        }
        #expect(saved == code)
        #expect(
            FormReview(s).entries.first { $0.field.id == "state" }?.shown == "\(spoken) (\(code))",
            "the review names the state in the session's language")
        for text in ["Maria Lopez", "1985-04-23"] { _ = try Self.answer(&s, text) }
        let pattern = entry["licenseNumber"]?["pattern"]?.stringValue
        if let pattern, pattern != "unknown", let example = entry["licenseNumber"]?["example"]?.stringValue {
            guard case .saved(_, _, let reopened) = try Self.answer(&s, "ABCDEFGH") else {
                Issue.record("\(code): ABCDEFGH refused by the field type")
                return
            }
            #expect(reopened.first?.message.contains("format of a \(name) licence number") == true || language != "en")
            #expect(s.nextQuestion?.field.id == "licenseNumber", "\(code): a wrong format is asked again")
            guard case .saved(_, _, let fine) = try Self.answer(&s, example) else { return }
            #expect(fine.isEmpty, "\(code): \(example)")
        } else {
            guard case .saved(_, _, let fine) = try Self.answer(&s, "ABCDEFGH") else { return }
            #expect(fine.isEmpty, "\(code): no format known, so none is checked")
        }
        for text in ["no", "1 Main Street", "Springfield"] { _ = try Self.answer(&s, text) }
        let (inside, outside) = Self.zips(code)
        guard case .saved(_, _, let wrong) = try Self.answer(&s, outside) else {
            Issue.record("\(code): \(outside) refused by the field type")
            return
        }
        #expect(wrong.map(\.field) == ["addressPostalCode"], "\(code): \(outside) is not a \(name) ZIP")
        guard case .saved(_, _, let right) = try Self.answer(&s, inside) else { return }
        #expect(right.isEmpty, "\(code): \(inside)")
        for text in ["no", "a@b.co", "5551234567", "no", "no", "no", "no", "no", "card", "2026-12-20", "yes"] {
            _ = try Self.answer(&s, text)
        }
        #expect(s.isComplete, "\(code): \(String(describing: s.nextQuestion?.field.id))")
        let review = FormReview(s)
        let renewal = review.fees.first { $0.id == "renewal" }
        let unknownRenewal = entry["fees"]?["renewal"]?.stringValue == "unknown"
        #expect((renewal?.amount == nil) == unknownRenewal, "\(code): \(String(describing: renewal))")
        #expect(
            review.json["fees"]?["items"]?.arrayValue?.contains { $0["amount"] == .string("unknown") } == unknownRenewal
        )
        let unknown = review.checklist.first { $0.title.contains(entry["officialUrl"]?.stringValue ?? "-") }
        if Self.lookup.unknownFacts(key: code).isEmpty {
            #expect(unknown == nil, "\(code)")
        } else {
            #expect(unknown?.items.count == Self.lookup.unknownFacts(key: code).count, "\(code)")
        }
        if let renewal, unknownRenewal {
            #expect(review.documentText.contains("\(renewal.label): \(review.unknownWord)"), "\(code)")
        }
    }

    @Test("OH, Ohio, ohio and أوهايو are Ohio; an age of 11 is refused at the birth date; 31/02 is impossible")
    func issueCases() throws {
        let field = try #require(Self.template.field("state"))
        let validator = FieldValidator(today: FormsFixture.today, language: "ar")
        for text in ["OH", "Ohio", "ohio", "أوهايو", "اوهايو", "Nueva York", "كاليفورنيا"] {
            #expect(["OH", "NY", "CA"].contains(try validator.normalize(text, for: field).get()), "\(text)")
        }
        var s = try Self.start()
        for text in ["yes", "Ohio", "Sam Doe"] { _ = try Self.answer(&s, text) }
        guard case .saved(_, _, let young) = try Self.answer(&s, "2015-06-01") else {
            Issue.record("a past date refused")
            return
        }
        #expect(young.map(\.field) == ["dob"] && s.nextQuestion?.field.id == "dob", "checked at once: \(young)")
        #expect(young.first?.message.contains("under 14") == true)
        guard case .refused(let impossible) = try Self.answer(&s, "31/02/1985") else {
            Issue.record("31/02/1985 accepted")
            return
        }
        #expect(impossible.message.contains("not a real date: month 2 of 1985 has 28 days"), "\(impossible.message)")
        guard case .refused(let month) = try Self.answer(&s, "13/13/1990") else { return }
        #expect(month.message.contains("there is no month 13"), "\(month.message)")
    }

    @Test("a suspended licence is refused with what to do; a veteran designation adds its checklist and its fee")
    func suspendedAndVeteran() throws {
        var s = try Self.start()
        for text in [
            "yes", "CA", "Maria Lopez", "1985-04-23", "D1234567", "no", "1 Main Street", "Fresno", "93721", "no",
        ] {
            _ = try Self.answer(&s, text)
        }
        for text in ["a@b.co", "5551234567"] { _ = try Self.answer(&s, text) }
        #expect(s.nextQuestion?.field.id == "licenseSuspended")
        guard case .refused(let p) = try Self.answer(&s, "yes") else {
            Issue.record("a suspended licence was accepted")
            return
        }
        #expect(p.suggestion.contains("cannot be renewed") && p.suggestion.contains("reinstate"), "\(p)")
        for text in ["no", "no", "no", "no"] { _ = try Self.answer(&s, text) }
        #expect(s.nextQuestion?.field.id == "veteranDesignation")
        for text in ["yes", "card", "2026-12-20", "yes"] { _ = try Self.answer(&s, text) }
        let review = FormReview(s)
        #expect(review.checklist.contains { $0.title == "Veteran designation" })
        let fee = try #require(review.fees.first { $0.id == "veteranDesignation" })
        #expect(fee.amount == nil && review.hasUnknownFees && review.documentText.contains("+ unknown"))
    }
}
