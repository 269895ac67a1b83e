import Foundation
import LlamaCppBackend
import SanadCore
import SanadTestSupport
import Testing

/// Why the live comparisons with the native build's tools are skipped, when they are.
private let live = Comment(rawValue: "needs the native build's tools: \(LlamaFixture.toolsUnavailable)")

@Suite(
    "llama backend session on SmolLM2", .serialized,
    .enabled(if: LlamaFixture.ready, "needs libllama b11434 and SmolLM2"))
struct LlamaSessionTests {
    @Test func goldenInputsDecode() {
        #expect(LlamaFixture.prompts.count >= 8, "scripts/golden/prompts.json is missing or unreadable")
        #expect(LlamaFixture.gemma3Prompts.count >= 8, "scripts/golden/prompts.json is missing or unreadable")
        #expect(LlamaFixture.corpus.count >= 20, "scripts/golden/corpus.json is missing or unreadable")
    }

    /// Same prompt tokens and the same 32 greedy tokens as `llama-simple -n 32` of the same build, run now.
    @Test(.enabled(if: LlamaFixture.tools != nil, live), arguments: LlamaFixture.prompts)
    func greedyMatchesLlamaSimple(_ prompt: GoldenInputs.Case) async throws {
        try await LlamaFixture.checkGreedy(prompt, model: LlamaFixture.smolLM2)
    }

    /// Logits computed one token at a time (batch size 1) equal llama-simple's step-by-step logits, bit for bit: the
    /// same build's greedy-ids prints each step's 5 largest with 9 significant digits (a float32 exactly). Prompts
    /// under 32 tokens, which llama.cpp decodes the same whatever the grouping.
    @Test(.enabled(if: LlamaFixture.tools != nil, live), arguments: LlamaFixture.prompts)
    func teacherForcedLogitsMatchLlamaSimpleSteps(_ prompt: GoldenInputs.Case) async throws {
        let url = try #require(LlamaFixture.smolLM2)
        let expected = try #require(LlamaFixture.tools).greedy(model: url, prompt: prompt.text)
        guard expected.promptIDs.count < 32 else { return }
        let session = try await LlamaCppBackend().loadModel(
            at: url, options: ModelLoadOptions(threads: 1, contextLength: 128, batchSize: 1))
        let tokens = expected.promptIDs + expected.ids.dropLast()
        let rows = try session.evaluateLogits(tokens, rows: (expected.promptIDs.count - 1)..<tokens.count)
        try #require(rows.count == expected.ids.count && expected.topLogits.count == expected.ids.count)
        var differing: [String] = []
        for (step, (row, top)) in zip(rows, expected.topLogits).enumerated() {
            for (id, logit) in top where row[Int(id)].bitPattern != logit.bitPattern {
                differing.append("step \(step) token \(id): \(row[Int(id)]) vs \(logit)")
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5)) (\(differing.count) in all)")
    }

    @Test(.enabled(if: LlamaFixture.tools != nil, live), arguments: LlamaFixture.corpus)
    func tokenizationMatchesLlamaTokenize(_ c: GoldenInputs.Case) async throws {
        try await LlamaFixture.checkTokenize(c, model: LlamaFixture.smolLM2)
    }

    @Test func describesTheModel() async throws {
        let session = try await LlamaFixture.session(context: 256)
        #expect(session.model.architecture == "llama")
        #expect(session.model.vocabularySize == 49152)
        #expect(session.model.contextLength == 256)
        #expect(session.model.trainingContextLength == 8192)
        #expect(session.model.parameterCount > 100_000_000)
    }

    @Test func detokenizeInvertsTokenize() async throws {
        let session = try await LlamaFixture.session(context: 64)
        let text = "Hello, world! مرحبا بالعالم 123"
        let ids = try session.tokenize(text, addSpecial: false, parseSpecial: false)
        #expect(session.detokenize(ids, renderSpecial: false) == text)
        let chat = try session.tokenize("<|im_start|>user", addSpecial: false, parseSpecial: true)
        #expect(session.detokenize(chat, renderSpecial: true) == "<|im_start|>user")
        #expect(session.detokenize(chat, renderSpecial: false) == "user")
    }

    /// The chat prompt comes from SanadCore's ChatTemplate; it must equal llama.cpp's own rendering.
    @Test func chatTemplateMatchesLlamaChatApplyTemplate() async throws {
        let session = try await LlamaFixture.session(context: 64)
        let messages: [ChatMessage] = [
            .system("You are helpful."), .user("What is 2 + 2?"), .assistant("4"), .user("  And 3 + 3?\n"),
        ]
        let ours = try session.applyChatTemplate(messages, addAssistantPrompt: true)
        #expect(ours.hasPrefix("<|im_start|>system\nYou are helpful.<|im_end|>\n"))
        let backend = LlamaCppBackend()
        #expect(ours == (try backend.llamaChatApplyTemplate("chatml", messages: messages, addAssistantPrompt: true)))
        for family in [ChatTemplate.chatml, .gemma] {
            for add in [true, false] {
                #expect(
                    family.apply(messages, addAssistantPrompt: add)
                        == (try backend.llamaChatApplyTemplate(
                            family.rawValue, messages: messages, addAssistantPrompt: add)),
                    "\(family) addAssistantPrompt=\(add)")
            }
        }
    }

    @Test func promptLongerThanTheContextThrowsPromptTooLong() async throws {
        let session = try await LlamaFixture.session(context: 16)
        let prompt = String(repeating: "one two three four five six seven eight ", count: 4)
        let n = try session.tokenize(prompt).count
        #expect(n > 16)
        await #expect(throws: SanadError.promptTooLong(tokens: n, context: 16)) {
            _ = try await LlamaFixture.collect(
                session.generate(.text(prompt, parseSpecial: false), parameters: GenerationParameters(maxTokens: 4)))
        }
        #expect(throws: SanadError.promptTooLong(tokens: n, context: 16)) {
            _ = try session.evaluateLogits(try session.tokenize(prompt), rows: nil)
        }
        // Asked to truncate, it keeps the last tokens, leaving room for the 2 to generate (README, "Generation").
        let run = try await LlamaFixture.collect(
            session.generate(
                .text(prompt, parseSpecial: false),
                parameters: GenerationParameters(maxTokens: 2, sampling: .greedy, truncatePrompt: true)))
        #expect(run.stop != nil)
        #expect(run.stats?.promptTokens == 14)
    }

    @Test func generationStopsWhenTheContextIsFull() async throws {
        let session = try await LlamaFixture.session(context: 32)
        let prompt = "1, 2, 3, 4, 5, 6,"
        let n = try session.tokenize(prompt).count
        let run = try await LlamaFixture.collect(
            session.generate(
                .text(prompt, parseSpecial: false), parameters: GenerationParameters(maxTokens: 100, sampling: .greedy))
        )
        #expect(run.stop == .contextFull)
        // Positions n…31 are decoded; the token sampled from position 31 is the last one.
        #expect(run.ids.count == 32 - n + 1)
    }

    /// Cancelling the consumer stops generation within a token or two: the cache holds only what was generated
    /// by then, so a prompt that needs the rest of the context still fits.
    @Test func cancellationStopsGeneration() async throws {
        let context = 128
        let session = try await LlamaFixture.session(context: context)
        let prompt = "1, 2, 3, 4, 5, 6,"
        let n = try session.tokenize(prompt).count
        let stream = session.generate(
            .text(prompt, parseSpecial: false), parameters: GenerationParameters(maxTokens: 10_000, sampling: .greedy))
        let consumer = Task {
            var seen = 0
            for try await event in stream {
                if case .token = event { seen += 1 }
                if seen == 3 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return seen
        }
        let seen = try await consumer.value
        // The cancel reaches the engine when the consuming task next runs, which a loaded machine can delay by
        // some tokens; the engine then stops within one token (the abort callback and the per-token flag).
        #expect(seen >= 3 && seen < 48)
        // Waits for the generation thread to let go of the session, then checks how far it got.
        let slack = 24  // tokens the generation thread may have run ahead of the consumer
        let room = context - (n + seen + slack)
        let filler = try session.tokenize(
            String(repeating: " the", count: room), addSpecial: false, parseSpecial: false)
        #expect(filler.count == room)
        let next = try await LlamaFixture.collect(
            session.generate(.tokens(filler), parameters: GenerationParameters(maxTokens: 1, sampling: .greedy)))
        #expect(next.stop != nil)
    }

    @Test func resetGivesTheSameGreedyContinuation() async throws {
        let session = try await LlamaFixture.session(context: 128)
        let params = GenerationParameters(maxTokens: 8, sampling: .greedy)
        let first = try await LlamaFixture.collect(
            session.generate(.text("The", parseSpecial: false), parameters: params))
        session.reset()
        let second = try await LlamaFixture.collect(
            session.generate(.text("The", parseSpecial: false), parameters: params))
        #expect(first.ids == second.ids)
        #expect(first.ids.count == 8)
        // Without a reset the session continues after what it holds, so the same prompt gives another answer.
        let third = try await LlamaFixture.collect(
            session.generate(.text("The", parseSpecial: false), parameters: params))
        #expect(third.stats?.promptTokens == 2)  // the pending last token + "The"
    }

    /// Teacher-forced logits agree with generation: the argmax of each row is the next greedy token.
    @Test func evaluateLogitsAgreesWithGreedyGeneration() async throws {
        let session = try await LlamaFixture.session(context: 128)
        let prompt = try session.tokenize("The history of the printing press begins in")
        let run = try await LlamaFixture.collect(
            session.generate(.tokens(prompt), parameters: GenerationParameters(maxTokens: 12, sampling: .greedy)))
        session.reset()
        let tokens = prompt + run.ids.dropLast()
        let rows = try session.evaluateLogits(tokens, rows: (prompt.count - 1)..<tokens.count)
        #expect(rows.count == run.ids.count)
        #expect(rows.allSatisfy { $0.count == 49152 })
        let argmax = rows.map { row in Int32(row.indices.max { row[$0] < row[$1] } ?? -1) }
        #expect(argmax == run.ids)
        // All rows vs a selection: the same numbers.
        let all = try session.evaluateLogits(tokens, rows: nil)
        #expect(all.count == tokens.count)
        #expect(all[prompt.count - 1] == rows[0])
    }

    /// Decoding in chunks keeps positions and the cache right: below llama.cpp's large-batch kernels (which round
    /// differently from 32 tokens up), the logits do not depend on how the tokens are grouped at all.
    @Test func chunkedDecodingGivesTheSameLogits() async throws {
        let url = try #require(LlamaFixture.smolLM2)
        var results: [[[Float]]] = []
        for batch in [1, 7, 16] {
            let session = try await LlamaCppBackend().loadModel(
                at: url, options: ModelLoadOptions(threads: 1, contextLength: 64, batchSize: batch))
            let tokens = try session.tokenize(String(repeating: "A stitch in time saves nine. ", count: 5))
            #expect(tokens.count > 32)
            results.append(try session.evaluateLogits(Array(tokens.prefix(31)), rows: nil))
        }
        #expect(results[1] == results[0])
        #expect(results[2] == results[0])
    }

    /// The first chunk of `llama-perplexity -c 512 -b 512 --chunks 1` of the same build, run now (one 512-token
    /// batch; the second half scored), computed from `evaluateLogits` in one 512-token batch: the 4 decimals it prints.
    @Test(.enabled(if: LlamaFixture.tools != nil, live))
    func firstPerplexityChunkMatchesLlamaPerplexity() async throws {
        let url = try #require(LlamaFixture.smolLM2)
        let input = "/usr/share/common-licenses/GPL-3"
        let expected = try #require(LlamaFixture.tools).perplexity(
            model: url, textFile: input, context: 512, batch: 512, chunks: 1, threads: 1)
        let session = try await LlamaFixture.session(context: 512)
        let (ppl, chunks) = try llamaPerplexity(session, textFile: input, context: 512, maxChunks: 1)
        #expect(chunks == 1 && expected.runningPPL.count == 1)
        #expect(
            abs(ppl - expected.ppl) <= 0.00005 + 1e-9,
            "PPL of chunk 1: \(ppl), llama-perplexity: \(expected.finalLine)")
    }

    @Test func samplingWithTheSameSeedRepeats() async throws {
        let session = try await LlamaFixture.session(context: 128)
        let params = GenerationParameters(
            maxTokens: 12, sampling: SamplingParameters(temperature: 0.9, repetitionPenalty: 1.1, seed: 42))
        let a = try await LlamaFixture.collect(
            session.generate(.text("Once upon a time", parseSpecial: false), parameters: params))
        session.reset()
        let b = try await LlamaFixture.collect(
            session.generate(.text("Once upon a time", parseSpecial: false), parameters: params))
        #expect(a.ids == b.ids)
        #expect(!a.ids.isEmpty)
    }

    @Test("log-probabilities are the log-softmax of libllama's raw logits; greedy picks the first alternative")
    func logProbabilities() async throws {
        let session = try await LlamaFixture.session(context: 128)
        let recorder = LogProbabilityRecorder(topCount: 2)
        let text = "The capital of France is"
        let run = try await LlamaFixture.collect(
            session.generate(
                .text(text, parseSpecial: false),
                parameters: GenerationParameters(maxTokens: 6, sampling: .greedy, logProbabilities: recorder)))
        let entries = recorder.recorded
        #expect(!entries.isEmpty && entries.count == run.stats?.generatedTokens)
        #expect(entries.map(\.chosen.token) == Array(run.ids.prefix(entries.count)))
        #expect(entries.allSatisfy { $0.top.count == 2 && $0.top.first == $0.chosen && $0.chosen.logProbability <= 0 })
        session.reset()
        let prompt = try session.tokenize(text, addSpecial: true, parseSpecial: false)
        let logits = try #require(session.evaluateLogits(prompt, rows: (prompt.count - 1)..<prompt.count).first)
        let largest = Double(logits.max() ?? 0)
        let normalizer = largest + log(logits.reduce(0.0) { $0 + exp(Double($1) - largest) })
        let expected = Double(logits[Int(entries[0].chosen.token)]) - normalizer
        #expect(abs(Double(entries[0].chosen.logProbability) - expected) < 1e-3)
    }

    @Test("presence and frequency penalties reach libllama's penalties sampler")
    func presenceAndFrequencyPenalties() async throws {
        let session = try await LlamaFixture.session(context: 128)
        func greedy(_ sampling: SamplingParameters) async throws -> [Int32] {
            session.reset()
            return try await LlamaFixture.collect(
                session.generate(
                    .text("1, 2, 3, 4, 5, 6,", parseSpecial: false),
                    parameters: GenerationParameters(maxTokens: 12, sampling: sampling))
            ).ids
        }
        var penalized = SamplingParameters.greedy
        penalized.presencePenalty = 2
        penalized.frequencyPenalty = 1
        let plain = try await greedy(.greedy)
        #expect(try await greedy(penalized) != plain)
    }

    @Test func stopStringsEndGenerationAndAreNotEmitted() async throws {
        let session = try await LlamaFixture.session(context: 128)
        let run = try await LlamaFixture.collect(
            session.generate(
                .text("1, 2, 3, 4, 5, 6,", parseSpecial: false),
                parameters: GenerationParameters(maxTokens: 40, sampling: .greedy, stopStrings: ["10"])))
        #expect(run.stop == .stopString)
        #expect(!run.text.contains("10"))
        #expect(run.text.hasPrefix(" 7, 8, 9, "))
    }
}

@Suite(
    "llama backend session on Gemma 3", .serialized,
    .enabled(if: LlamaFixture.gemma3Ready, "needs libllama b11434 and gemma-3-270m"))
struct LlamaGemma3Tests {
    @Test(.enabled(if: LlamaFixture.tools != nil, live), arguments: LlamaFixture.gemma3Prompts)
    func greedyMatchesLlamaSimple(_ prompt: GoldenInputs.Case) async throws {
        try await LlamaFixture.checkGreedy(prompt, model: LlamaFixture.gemma3)
    }

    @Test(.enabled(if: LlamaFixture.tools != nil, live), arguments: LlamaFixture.corpus)
    func tokenizationMatchesLlamaTokenize(_ c: GoldenInputs.Case) async throws {
        try await LlamaFixture.checkTokenize(c, model: LlamaFixture.gemma3)
    }

    /// This GGUF has no chat template: its architecture (gemma3) picks the built-in gemma family, and the `template`
    /// engine option can name a family (or a file, or Jinja text) instead.
    @Test func chatTemplateComesFromTheArchitectureOrTheEngineOption() async throws {
        let url = try #require(LlamaFixture.gemma3)
        let messages: [ChatMessage] = [.system("Be brief."), .user("Hi")]
        let gemma = "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
        let plain = try await LlamaFixture.session(context: 64, model: url)
        #expect(try plain.applyChatTemplate(messages, addAssistantPrompt: true) == gemma)
        let session = try await LlamaCppBackend().loadModel(
            at: url,
            options: ModelLoadOptions(threads: 1, contextLength: 64, engineOptions: ["template": .string("chatml")]))
        let text = try session.applyChatTemplate(messages, addAssistantPrompt: true)
        #expect(
            text == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
        let bad = try await LlamaCppBackend().loadModel(
            at: url,
            options: ModelLoadOptions(threads: 1, contextLength: 64, engineOptions: ["template": .string("bogus")]))
        #expect(throws: SanadError.self) { _ = try bad.applyChatTemplate(messages, addAssistantPrompt: true) }
    }
}
