import FormsPlugin
import Foundation
import SanadCore
import SanadTestSupport

/// The shipped templates, a fixed today, and fresh store folders for the forms tests.
enum FormsFixture {
    static let today = CivilDate(year: 2026, month: 11, day: 24)!

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

    static let dmvAnswers = FormScripts.dmv
    static let ds160Answers = FormScripts.ds160
}
