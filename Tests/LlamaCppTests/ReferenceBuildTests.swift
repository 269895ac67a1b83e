import Foundation
import SanadTestSupport
import Testing

/// The committed fixtures (Tests/Fixtures/llama-b11434) are the reference build's output: where this machine can run
/// that build (x86-64 with AVX2), running it now reproduces them exactly, whatever the CPU's other features (AVX-512
/// included). This is what makes them a valid reference for the pure-Swift engine on a machine that cannot run it.
@Suite(
    "the reference build (AVX2) reproduces the committed fixtures",
    .enabled(
        if: LlamaTools.reference != nil,
        Comment(rawValue: "no live reference build: \(LlamaTools.referenceUnavailable ?? "")")))
struct ReferenceBuildTests {
    static let cases: [(key: String, model: String, prompt: GoldenInputs.Case)] =
        GoldenInputs.prompts("smollm2").map { ("smollm2", TestPaths.smolLM2, $0) }
        + GoldenInputs.prompts("gemma3").map { ("gemma3", TestPaths.gemma3, $0) }

    @Test(arguments: cases.indices)
    func greedyEqualsTheFixture(_ index: Int) throws {
        let c = Self.cases[index]
        guard let model = TestPaths.model(c.model) else { return }
        let file = FidelityReference.fixtureName("greedy", c.key)
        let fixture: FidelityReference.GreedyFile = try #require(
            FidelityReference.decodeFixture(file), "Tests/Fixtures/\(file) is missing or unreadable")
        let expected = try #require(
            fixture.cases.first { $0.name == c.prompt.name }, "no case \(c.prompt.name) in \(file)")
        let run = try #require(LlamaTools.reference).greedy(model: model, prompt: c.prompt.text)
        #expect(run.promptIDs == expected.prompt_ids, "\(c.key) \(c.prompt.name)")
        #expect(run.ids == expected.ids, "\(c.key) \(c.prompt.name)")
        #expect(run.stoppedAtEOG == expected.stopped_at_eog)
        if expected.text_hex == nil { #expect(String(decoding: run.text, as: UTF8.self) == expected.text) }
        let fixtureTop: [[String]] = (expected.top_logits ?? []).map { step in
            step.map { pair -> String in
                let bits: UInt32 = Float(pair[1]).bitPattern
                return "\(Int(pair[0])):\(bits)"
            }
        }
        let liveTop: [[String]] = run.topLogits.map { step in
            step.map { pair -> String in "\(pair.id):\(pair.logit.bitPattern)" }
        }
        #expect(liveTop == fixtureTop, "\(c.key) \(c.prompt.name): top logits differ from the fixture")
    }

    @Test func perplexityEqualsTheFixture() throws {
        let model = try #require(TestPaths.model(TestPaths.smolLM2))
        let fixture: FidelityReference.PerplexityFile = try #require(
            FidelityReference.decodeFixture("llama-b11434/perplexity.json"))
        let run = try #require(LlamaTools.reference).perplexity(
            model: model, textFile: fixture.input, context: fixture.n_ctx, batch: 2048)
        #expect(run.finalLine == fixture.final_estimate_line)
        #expect(run.runningPPL == fixture.running_ppl_after_chunk)
    }
}
