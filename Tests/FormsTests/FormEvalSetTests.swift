import FormsPlugin
import Foundation
import SanadCore
import SanadTestSupport
import Testing

@Suite("Free-text evaluation set (Tests/Fixtures/forms-eval/utterances.json)")
struct FormEvalSetTests {
    static func load() throws -> FormEvalSet {
        let file = TestPaths.fixture("forms-eval/utterances.json")
        return try FormEvalSet.load(try Data(contentsOf: file), file: file.path)
    }

    @Test("at least 60 utterances for both templates, at least 15 in Arabic")
    func size() throws {
        let set = try Self.load()
        #expect(set.cases.count >= 60)
        #expect(set.cases.filter { $0.language == "ar" }.count >= 15)
        #expect(Set(set.cases.map(\.templateID)) == ["dmv-renewal", "ds-160"])
        #expect(Set(set.cases.map(\.id)).count == set.cases.count)
    }

    @Test(
        "each context reaches its current question; every expected field is pending there and its value is in normal form"
    )
    func expectedValuesValidate() throws {
        let set = try Self.load()
        let catalog = try FormCatalog.bundled()
        let directory = try TestPaths.temporaryDirectory()
        let validator = FieldValidator(today: set.today)
        for c in set.cases {
            let s = try set.session(for: c, catalog: catalog, directory: directory)
            let pending = Dictionary(uniqueKeysWithValues: s.turn.pending.map { ($0.field.id, $0.field) })
            for (id, value) in c.expected {
                let field = try #require(pending[id], "\(c.id): \(id) is not pending at \(c.current)")
                #expect(validator.normalize(value, for: field) == .success(value), "\(c.id): \(id)='\(value)'")
            }
        }
    }

    @Test("scores count saved values against the expected ones")
    func scoring() {
        var score = FormEvalScore()
        score.add(saved: ["a": "1", "b": "x"], expected: ["a": "1", "c": "3"])
        #expect(score.truePositives == 1 && score.falsePositives == 1 && score.falseNegatives == 1)
        #expect(score.precision == 0.5 && score.recall == 0.5 && score.f1 == 0.5)
    }
}
