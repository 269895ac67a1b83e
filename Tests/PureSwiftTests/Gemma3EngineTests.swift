import Foundation
import GGUF
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

// The pure-Swift engine on Gemma-3-270M Q4_K_M against llama.cpp b11434's AVX2 arithmetic, exactly, as
// SmolLM2EngineTests holds SmolLM2 (SanadTestSupport's FidelityReference: the reference build's tools live where
// this machine runs them, else Tests/Fixtures/llama-b11434/greedy-gemma3.json). The reference build repacks the
// Q4_K matrices and multiplies them with its interleaved GEMV/GEMM (Q4_K.swift), which round by the batch: the
// prompt goes through as one batch and every generated token on its own, as llama-simple runs them.

enum Gemma3Fixtures {
    static let model = TestPaths.model(TestPaths.gemma3)
    static let prompts = GoldenInputs.prompts("gemma3")

    static func session(context: Int = 512, threads: Int = 2) throws -> PureSwiftSession {
        let url = try #require(model)
        return try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: threads, contextLength: context))
    }
}

@Suite(
    "Gemma 3 against llama.cpp",
    .enabled(if: Gemma3Fixtures.model != nil, "models/gemma-3-270m-q4_k_m.gguf is absent"))
struct Gemma3EngineTests {
    @Test("the configuration comes from the file's gemma3 keys: five sliding-window layers per global one")
    func configuration() throws {
        let file = try GGUFFile(path: try #require(Gemma3Fixtures.model).path)
        let c = try Gemma3Configuration(file: file)
        #expect(c.layers == 18 && c.embedding == 640 && c.heads == 4 && c.kvHeads == 1 && c.headDimension == 256)
        #expect(c.feedForward == 2048 && c.vocabularySize == 262_144)
        #expect(c.slidingWindow == 512)
        #expect(c.isLocalLayer.enumerated().filter { !$0.element }.map(\.offset) == [5, 11, 17])
        #expect(c.rope.mode == .neox && c.rope.frequencyBase == 1_000_000 && c.localRoPE.frequencyBase == 10_000)
        #expect(c.queryScale == 0.0625 && c.finalLogitSoftCap == 0)
    }

    @Test("the golden prompts cover at least 8 cases")
    func promptsPresent() {
        #expect(Gemma3Fixtures.prompts.count >= 8, "scripts/golden/prompts.json is missing or unreadable")
    }

    @Test("greedy generation picks llama.cpp's tokens, every one", arguments: Gemma3Fixtures.prompts)
    func greedy(_ prompt: GoldenInputs.Case) async throws {
        let model = try #require(Gemma3Fixtures.model)
        let reference = try FidelityReference.greedy(prompt, modelKey: "gemma3", model: model)
        let session = try Gemma3Fixtures.session()
        let promptIDs = try session.tokenize(prompt.text, addSpecial: true, parseSpecial: true)
        #expect(promptIDs == reference.promptIDs, "against \(FidelityReference.source)")
        let result = try await SmolLM2Fixtures.generate(
            session, .tokens(promptIDs), GenerationParameters(maxTokens: 32, sampling: .greedy))
        if let i = (0..<min(result.ids.count, reference.ids.count)).first(where: { result.ids[$0] != reference.ids[$0] }
        ) {
            Issue.record(
                "first divergence at generated token \(i): llama.cpp \(reference.ids[i]), pure-swift \(result.ids[i]) (\(FidelityReference.source))"
            )
        }
        #expect(result.ids == reference.ids)
        #expect(result.reason == (reference.stoppedAtEOG == nil ? .maxTokens : .endOfGeneration))
        if let text = reference.text { #expect(result.text == text) }
    }

    /// The logits of every greedy step, bit for bit: the prompt evaluated as one batch (its last row's logits), then
    /// llama.cpp's tokens one at a time, as llama-simple's loop (scripts/golden/greedy-ids) evaluates them.
    @Test("teacher-forced logits equal llama.cpp's, bit for bit", arguments: Gemma3Fixtures.prompts)
    func teacherForcedLogits(_ prompt: GoldenInputs.Case) throws {
        let model = try #require(Gemma3Fixtures.model)
        let reference = try FidelityReference.greedy(prompt, modelKey: "gemma3", model: model)
        let session = try Gemma3Fixtures.session()
        let runner = try session.network.makeRunner(
            contextLength: 512, batchSize: 512, threads: 2, options: RunnerOptions())
        let vocabulary = runner.vocabularySize
        var row = [Float](repeating: 0, count: vocabulary)
        var differing: [String] = []
        for step in 0..<reference.topLogits.count {
            let input = step == 0 ? reference.promptIDs : [reference.ids[step - 1]]
            input.withUnsafeBufferPointer { tokens in
                runner.evaluate(tokens, outputs: (tokens.count - 1)..<tokens.count, logits: &row)
            }
            for (id, logit) in reference.topLogits[step] where row[Int(id)].bitPattern != logit.bitPattern {
                differing.append("step \(step) token \(id): \(row[Int(id)]) vs \(logit)")
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5)) (\(differing.count) in all; \(FidelityReference.source))")
    }

    /// A prompt of 130 tokens is run in the engine's slices of 128 and 2, where llama.cpp multiplies all 130 rows at
    /// once; its Q6_K product rounds by the batch's rows, so the slices must too (MicroBatches.swift). Reference:
    /// scripts/golden/greedy-ids against the AVX2 reference build, run as
    /// `greedy-ids -m models/gemma-3-270m-q4_k_m.gguf -n 32 -f PROMPT` where PROMPT holds the first 580 bytes of
    /// /usr/share/common-licenses/GPL-3 (the first step's top logits with `-n 1 -k 3`).
    @Test("a 130-token prompt (a batch longer than the engine's slices) continues with llama.cpp's tokens")
    func longPrompt() async throws {
        let text = try #require(FileManager.default.contents(atPath: "/usr/share/common-licenses/GPL-3"))
        let session = try Gemma3Fixtures.session()
        let ids = try session.tokenize(
            String(decoding: text.prefix(580), as: UTF8.self), addSpecial: true, parseSpecial: true)
        #expect(ids.count == 130)
        let logits = try session.evaluateLogits(ids, rows: 129..<130)
        let top: [(Int, Float)] = [(236772, 16.8268833), (236758, 15.5932922), (236743, 15.4042635)]
        #expect(top.map { logits[0][$0.0].bitPattern } == top.map(\.1.bitPattern))
        let expected: [Int32] = [
            236772, 19118, 11440, 563, 5402, 531, 2583, 611, 506, 11425, 531, 107, 4177, 506, 4146, 611, 1161, 236761,
            108, 138, 818, 103857, 5884, 7423, 11440, 563, 496, 2196, 236764, 4865, 989, 10945,
        ]
        let result = try await SmolLM2Fixtures.generate(
            session, .tokens(ids), GenerationParameters(maxTokens: 32, sampling: .greedy))
        #expect(result.ids == expected)
    }
}
