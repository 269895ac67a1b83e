import Foundation
import SanadCore
import Testing

@testable import LlamaCppBackend

// Continuous batching in the llama engine (`LlamaCppBackend.loadModels(count:)`, `LlamaSession.sharing`): sessions
// on one context, a sequence each, decode their tokens as one batch of several sequences.
//
// libllama's batched products need not round as its single-token ones do (llama.cpp picks kernels by batch size
// and CPU), so a generation in a batch is not required to equal one alone token for token. What is required, on
// any CPU: every token a session generated together with others is its own sequence's greedy choice, i.e. the
// session's own logits (computed afterwards, alone, from its prompt and reply) rank it first or within
// `nearTie` of the first. A token from another sequence's row, or at a wrong position, is nowhere near.

@Suite(
    "llama engine: sessions sharing one context (continuous batching)",
    .enabled(if: LlamaFixture.ready, "needs libllama b11434 (scripts/install-llama) and models/ (scripts/setup)"))
struct LlamaSharedContextTests {
    static let prompts = [
        "The capital of France is", "Once upon a time, in a small village by the sea, there lived",
        "def fibonacci(n):", "<|im_start|>user\nName three primary colors.<|im_end|>\n<|im_start|>assistant\n",
    ]
    /// How far below the best logit a generated token may be (llama.cpp's logits of one token in batches of
    /// different sizes differ by far less).
    static let nearTie: Float = 0.05

    static func sharedSessions(_ count: Int, batch: Int = 512) async throws -> [any InferenceSession] {
        let url = try #require(LlamaFixture.smolLM2)
        return try await LlamaCppBackend().loadModels(
            at: url, options: ModelLoadOptions(threads: 2, contextLength: 256, batchSize: batch), count: count)
    }

    /// Checks that each generated token of `reply` after `prompt` is the session's own greedy choice (see above).
    static func expectOwnGreedyChoices(
        _ session: any InferenceSession, prompt: [Int32], reply: [Int32], _ label: String
    ) throws {
        guard !reply.isEmpty else { return }
        let all = prompt + reply
        let rows = try session.evaluateLogits(all, rows: (prompt.count - 1)..<(all.count - 1))
        #expect(rows.count == reply.count)
        for (j, row) in rows.enumerated() {
            let best = row.max() ?? 0
            #expect(
                row[Int(reply[j])] >= best - nearTie,
                "\(label), token \(j): \(reply[j]) has logit \(row[Int(reply[j])]), the best is \(best)")
        }
    }

    @Test("generations running together each follow their own sequence, and the steps share decodes")
    func togetherFollowOwnSequences() async throws {
        let sessions = try await Self.sharedSessions(Self.prompts.count)
        #expect(sessions.count == Self.prompts.count)
        #expect(LlamaCppBackend().sharesForwardPasses)
        let greedy = GenerationParameters(maxTokens: 32, sampling: .greedy)
        let results = try await withThrowingTaskGroup(of: (Int, [Int32], [Int32]).self) { group in
            for (i, session) in sessions.enumerated() {
                group.addTask {
                    let ids = try session.tokenize(Self.prompts[i], addSpecial: true, parseSpecial: true)
                    return (
                        i, ids, try await LlamaFixture.collect(session.generate(.tokens(ids), parameters: greedy)).ids
                    )
                }
            }
            var out = [([Int32], [Int32])](repeating: ([], []), count: sessions.count)
            for try await (i, prompt, reply) in group { out[i] = (prompt, reply) }
            return out
        }
        for (i, session) in sessions.enumerated() {
            #expect(!results[i].1.isEmpty)
            try Self.expectOwnGreedyChoices(session, prompt: results[i].0, reply: results[i].1, "prompt \(i)")
        }
        // The steps did meet: some llama_decode ran more than one sequence.
        #expect((sessions[0] as? LlamaSession)?.largestSharedPass ?? 0 >= 2)
    }
}

extension LlamaSharedContextTests {
    @Test("a session's prompt runs while another generates, and each follows its own sequence")
    func promptsAndConversationsStayApart() async throws {
        // A batch of 16: the second prompt takes several decodes, between the first session's steps.
        let sessions = try await Self.sharedSessions(2, batch: 16)
        let greedy = GenerationParameters(maxTokens: 24, sampling: .greedy)
        let prompts = try [1, 3].map {
            try sessions[0].tokenize(Self.prompts[$0], addSpecial: true, parseSpecial: true)
        }
        async let first = LlamaFixture.collect(sessions[0].generate(.tokens(prompts[0]), parameters: greedy))
        try await Task.sleep(nanoseconds: 20_000_000)
        let second = try await LlamaFixture.collect(sessions[1].generate(.tokens(prompts[1]), parameters: greedy))
        let firstReply = try await first.ids
        try Self.expectOwnGreedyChoices(sessions[0], prompt: prompts[0], reply: firstReply, "first")
        try Self.expectOwnGreedyChoices(sessions[1], prompt: prompts[1], reply: second.ids, "second")
    }
}
