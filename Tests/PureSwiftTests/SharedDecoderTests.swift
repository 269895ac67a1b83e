import Foundation
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

// Continuous batching in the pure-Swift engine (`PureSwiftSession.sharing`, Engine/SharedDecoder.swift): sessions
// that share one runner generate at the same time, their steps in common forward passes, and each produces what it
// produces alone. On SmolLM2 (Q4_1 and Q8_0 products, whose kernels do not round by the batch's size) that is
// token for token.

@Suite(
    "Sessions sharing a runner (continuous batching)",
    .enabled(if: SmolLM2Fixtures.model != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct SharedDecoderTests {
    static let prompts = [
        "The capital of France is", "Once upon a time, in a small village by the sea, there lived",
        "def fibonacci(n):", "<|im_start|>user\nName three primary colors.<|im_end|>\n<|im_start|>assistant\n",
    ]

    /// Every prompt's generation on `sessions`, all at once (session i runs prompt i).
    static func generateTogether(_ sessions: [PureSwiftSession], _ parameters: GenerationParameters) async throws
        -> [[Int32]]
    {
        try await withThrowingTaskGroup(of: (Int, [Int32]).self) { group in
            for (i, session) in sessions.enumerated() {
                group.addTask {
                    let ids = try session.tokenize(prompts[i], addSpecial: true, parseSpecial: true)
                    return (i, try await SmolLM2Fixtures.generate(session, .tokens(ids), parameters).ids)
                }
            }
            var out = [[Int32]](repeating: [], count: sessions.count)
            for try await (i, ids) in group { out[i] = ids }
            return out
        }
    }

    @Test("generations running together give each session's own tokens, greedy and sampled, twice over")
    func togetherEqualsAlone() async throws {
        let url = try #require(SmolLM2Fixtures.model)
        let options = ModelLoadOptions(threads: 2, contextLength: 256, batchSize: 64)
        let shared = try PureSwiftSession.sharing(count: Self.prompts.count, path: url.path, options: options)
        #expect(shared.count == Self.prompts.count)
        let alone = try SmolLM2Fixtures.session(context: 256, batch: 64)
        for parameters in [
            GenerationParameters(maxTokens: 40, sampling: .greedy),
            GenerationParameters(maxTokens: 40, sampling: SamplingParameters(temperature: 0.8, seed: 5)),
        ] {
            var expected: [[Int32]] = []
            for prompt in Self.prompts {
                alone.reset()
                let ids = try alone.tokenize(prompt, addSpecial: true, parseSpecial: true)
                expected.append(try await SmolLM2Fixtures.generate(alone, .tokens(ids), parameters).ids)
            }
            for session in shared { session.reset() }
            let together = try await Self.generateTogether(shared, parameters)
            for i in Self.prompts.indices {
                #expect(together[i] == expected[i], "prompt \(i): \(Self.prompts[i].debugDescription)")
            }
        }
        // The steps did meet: some pass ran more than one generation.
        #expect(shared[0].largestSharedPass >= 2)
        #expect(alone.largestSharedPass == 1)
    }

    @Test("a session's prompt runs while others generate, and each session keeps its own conversation")
    func promptsAndConversationsStayApart() async throws {
        let url = try #require(SmolLM2Fixtures.model)
        let shared = try PureSwiftSession.sharing(
            count: 2, path: url.path, options: ModelLoadOptions(threads: 2, contextLength: 256, batchSize: 16))
        let greedy = GenerationParameters(maxTokens: 24, sampling: .greedy)
        // Session 1 starts later with a prompt longer than the batch size, while session 0 is generating.
        async let first = SmolLM2Fixtures.generate(shared[0], .text(Self.prompts[1], parseSpecial: true), greedy)
        try await Task.sleep(nanoseconds: 20_000_000)
        let second = try await SmolLM2Fixtures.generate(shared[1], .text(Self.prompts[3], parseSpecial: true), greedy)
        let firstResult = try await first
        let alone = try SmolLM2Fixtures.session(context: 256, batch: 16)
        let expectedFirst = try await SmolLM2Fixtures.generate(
            alone, .text(Self.prompts[1], parseSpecial: true), greedy)
        let firstCount = alone.tokenCount
        alone.reset()
        let expectedSecond = try await SmolLM2Fixtures.generate(
            alone, .text(Self.prompts[3], parseSpecial: true), greedy)
        #expect(firstResult.ids == expectedFirst.ids)
        #expect(second.ids == expectedSecond.ids)
        // Each session's cache holds its own prompt and reply.
        #expect(shared[0].tokenCount == firstCount)
        #expect(shared[1].tokenCount == alone.tokenCount)
    }
}
