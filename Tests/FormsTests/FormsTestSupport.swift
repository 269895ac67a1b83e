import FormsPlugin
import Foundation
import SanadCore

/// The shipped templates, a fixed today, and fresh store folders for the forms tests.
enum FormsFixture {
    static let today = FormDate(year: 2026, month: 11, day: 24)!

    static func catalog() throws -> FormCatalog { try FormCatalog.bundled() }

    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-forms-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new session of `template` in a JSON store in a fresh folder.
    static func session(_ template: String, language: String = "en") throws -> FormSession {
        let store = try JSONFormStore(file: temporaryDirectory().appendingPathComponent("forms.json"))
        return try FormSession.start(
            template: try catalog().template(template), store: store, language: language, today: today)
    }

    /// Answers the current question with each text in turn; fails on a refusal.
    static func answer(_ session: inout FormSession, _ texts: [String]) throws {
        for text in texts {
            guard let q = session.nextQuestion else { throw FormError.invalidRequest("no question for '\(text)'") }
            let outcome = try session.apply(FormProposal(fieldID: q.field.id, value: text))
            if case .refused(let p) = outcome { throw FormError.invalidRequest("\(q.field.id) ← '\(text)': \(p)") }
        }
    }

    /// A complete DMV renewal in California with a name change.
    static let dmvAnswers = [
        "yes", "California", "Maria Lopez", "04/23/1985", "D1234567", "yes", "Maria Garcia", "1200 Main Street",
        "Sacramento", "95814", "no", "maria@example.com", "+1 916 555 0100", "no", "yes", "yes", "yes", "card", "yes",
    ]

    /// A complete DS-160: married, no previous travel or refusal, one security "yes".
    static let ds160Answers = [
        "ERIKSSON", "ANNA MARIA", "female", "1974-08-12", "STOCKHOLM", "SWE", "married", "ERIKSSON", "JOHN",
        "1972-01-02", "1", "2027-03-01", "14", "350 Fifth Avenue", "New York", "NY", "10118", "no", "no",
        "L898902C3", "SWE", "2022-04-15", "2032-04-14", "no", "yes", "Fined for speeding in 2019, paid.", "no", "no",
        "employed", "ACME AB", "40000", "anna@example.com", "+46 8 123 456", "yes", "yes",
    ]
}
