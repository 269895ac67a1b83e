import CreditScoringPlugin
import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// The model pass (`model-labels-v1`): how labels move the score (exact), and a real run with SmolLM2 through the CLI
/// (behaviour that holds for any model output: schema-valid labels, a bounded move, the same result twice).
@Suite("credit model pass")
struct ModelPassTests {
    func fixture() throws -> AnalysisResult {
        let url = try CreditFixtures.temporaryDirectory().appendingPathComponent("m.txt")
        try CreditFixtures.plain.write(to: url, atomically: true, encoding: .utf8)
        return try CreditAnalysis.run(path: url.path, settings: AnalysisSettings())
    }

    @Test("labels move the score by round(10 × (repayment + promise/2 − refusal − negative/2) / n), clamped to ±10")
    func combine() throws {
        let base = try fixture()
        #expect(base.prioritised.count == base.prioritisedTexts.count && !base.prioritised.isEmpty)
        let n = base.prioritised.count
        let paid = Array(repeating: MessageLabel(financial: "repayment", tone: "positive"), count: n)
        let up = ModelPass.combine(base, labels: paid)
        #expect(up.trustworthiness == min(100, base.trustworthiness + 10))
        #expect(up.method == "deterministic-features-v1+model-labels-v1")
        #expect(up.counts["modelLabelled"] == n && up.counts["modelRepayment"] == n && up.counts["modelPositive"] == n)
        #expect(up.explanations.last?.feature == "model labels" && up.explanations.last?.value == 10)
        #expect(up.explanations.last?.messageIds == Array(base.prioritised.prefix(5)))
        let refused = Array(repeating: MessageLabel(financial: "refusal", tone: "negative"), count: n)
        #expect(ModelPass.combine(base, labels: refused).trustworthiness == max(0, base.trustworthiness - 10))
        let neutral = Array(repeating: MessageLabel(financial: "none", tone: "neutral"), count: n)
        let same = ModelPass.combine(base, labels: neutral)
        #expect(same.trustworthiness == base.trustworthiness && same.explanations.last?.messageIds == [])
        var mixed = neutral
        mixed[0] = MessageLabel(financial: "promise", tone: "neutral")  // +0.5 of 10/n
        let expected = Int((10 * 0.5 / Double(n)).rounded())
        #expect(ModelPass.combine(base, labels: mixed).trustworthiness == base.trustworthiness + expected)
    }

    @Test(
        "SmolLM2 labels the prioritised messages: a record that verifies, names the model, moves the score by ≤ 10, twice the same",
        .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
    func realModel() throws {
        let dir = try CreditFixtures.temporaryDirectory()
        let input = dir.appendingPathComponent("m.txt")
        try CreditFixtures.plain.write(to: input, atomically: true, encoding: .utf8)
        let base = try fixture()
        var records: [JSONValue] = []
        for _ in 0..<2 {
            let r = try SanadCLI.run(
                [
                    "credit", "analyze", "--consent", input.path, "--model", TestPaths.smolLM2, "--backend",
                    "pure-swift", "--tier",
                    "4gb", "--json",
                ],
                environment: ["SANAD_DATA": dir.path])
            #expect(r.status == 0, "\(r.stderr)")
            records.append(try #require(try JSONValue.parse(r.stdout)["record"]))
        }
        let record = records[0]
        #expect(record["method"]?.stringValue == "deterministic-features-v1+model-labels-v1")
        #expect(record["model"]?["id"]?.stringValue == TestPaths.smolLM2)
        #expect(record["model"]?["weightsSHA256"]?.stringValue?.count == 64)
        #expect(record["counts"]?["modelLabelled"]?.intValue == base.prioritised.count)
        let score = record["trustworthiness"]?.intValue ?? -1
        #expect(abs(score - base.trustworthiness) <= ModelPass.maximumAdjustment)
        #expect(records[1]["trustworthiness"] == record["trustworthiness"] && records[1]["counts"] == record["counts"])
        let text = record.jsonString
        for line in CreditFixtures.plain.split(separator: "\n") {
            let message = String(line.split(separator: "|").last ?? "").trimmingCharacters(in: .whitespaces)
            if message.count > 12 { #expect(!text.contains(message), "\(message)") }
        }
    }
}
