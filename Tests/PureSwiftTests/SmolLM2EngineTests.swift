import Foundation
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import Testing

// The pure-Swift engine on SmolLM2-135M-Instruct Q4_1 against llama.cpp b11434's AVX2 arithmetic, exactly: the
// reference build's tools run live where this machine can run them, else the committed fixtures
// (SanadTestSupport's FidelityReference; Tests/Fixtures/llama-b11434/README.md says why AVX2 and what differs with
// AVX-512). Prompts: scripts/golden/prompts.json.

enum SmolLM2Fixtures {
    static let model = TestPaths.model(TestPaths.smolLM2)
    static let prompts = GoldenInputs.prompts("smollm2")

    static func session(context: Int = 512, threads: Int = 2, batch: Int = 512) throws -> PureSwiftSession {
        let url = try #require(model)
        return try PureSwiftSession(
            path: url.path, options: ModelLoadOptions(threads: threads, contextLength: context, batchSize: batch))
    }

    /// Runs a generation to the end; returns the token ids, the joined text and how it finished.
    static func generate(_ session: PureSwiftSession, _ input: GenerationInput, _ parameters: GenerationParameters)
        async throws -> (ids: [Int32], text: String, reason: StopReason?)
    {
        var ids: [Int32] = []
        var text = ""
        var reason: StopReason?
        for try await event in session.generate(input, parameters: parameters) {
            switch event {
            case .token(let id, let piece):
                ids.append(id)
                text += piece
            case .finished(let r, _): reason = r
            }
        }
        return (ids, text, reason)
    }
}

@Suite(
    "SmolLM2 against llama.cpp",
    .enabled(if: SmolLM2Fixtures.model != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct SmolLM2EngineTests {
    @Test("the golden prompts cover at least 8 cases")
    func promptsPresent() {
        #expect(SmolLM2Fixtures.prompts.count >= 8, "scripts/golden/prompts.json is missing or unreadable")
    }

    @Test("greedy generation picks llama.cpp's tokens, every one", arguments: SmolLM2Fixtures.prompts)
    func greedy(_ prompt: GoldenInputs.Case) async throws {
        let model = try #require(SmolLM2Fixtures.model)
        let reference = try FidelityReference.greedy(prompt, modelKey: "smollm2", model: model)
        let session = try SmolLM2Fixtures.session()
        // The prompt ids come from the pure-Swift tokenizer.
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

    /// The logits of every generation step, computed one token at a time (the engine's generation path), equal the
    /// reference's bit for bit: llama-simple's loop in scripts/golden/greedy-ids prints each step's 5 largest logits
    /// with 9 significant digits, which name a float32 exactly. Prompts under 32 tokens: llama.cpp decodes the prompt
    /// as one batch, and below 32 tokens its numbers do not depend on the grouping.
    @Test(
        "teacher-forced logits at the one-token path equal llama.cpp's, bit for bit",
        arguments: SmolLM2Fixtures.prompts)
    func teacherForcedLogits(_ prompt: GoldenInputs.Case) throws {
        let model = try #require(SmolLM2Fixtures.model)
        let reference = try FidelityReference.greedy(prompt, modelKey: "smollm2", model: model)
        guard reference.promptIDs.count < 32 else { return }
        let session = try SmolLM2Fixtures.session(context: 128, batch: 1)
        let tokens = reference.promptIDs + reference.ids.dropLast()
        let rows = try session.evaluateLogits(tokens, rows: (reference.promptIDs.count - 1)..<tokens.count)
        try #require(rows.count == reference.ids.count && reference.topLogits.count == reference.ids.count)
        var differing: [String] = []
        for (step, (row, top)) in zip(rows, reference.topLogits).enumerated() {
            #expect(!top.isEmpty)
            for (id, logit) in top where row[Int(id)].bitPattern != logit.bitPattern {
                differing.append("step \(step) token \(id): \(row[Int(id)]) vs \(logit)")
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5)) (\(differing.count) in all; \(FidelityReference.source))")
    }

    @Test("perplexity on the GPL-3 text at context 512 equals llama-perplexity's to the 4 decimals it prints")
    func perplexity() throws {
        let model = try #require(SmolLM2Fixtures.model)
        let text = "/usr/share/common-licenses/GPL-3"
        let reference = try FidelityReference.perplexity(
            modelKey: "smollm2", model: model, textFile: text, context: 512)
        let session = try SmolLM2Fixtures.session(context: 512)
        // llama-perplexity's method (SanadTestSupport's llamaPerplexity).
        let (ppl, chunks) = try llamaPerplexity(session, textFile: text, context: 512)
        #expect(chunks == reference.chunks)
        #expect(
            abs(ppl - reference.ppl) <= 0.00005 + 1e-9,
            "pure-swift PPL \(ppl), llama.cpp \(reference.ppl) (\(FidelityReference.source))")
    }

    /// A prompt of 64 tokens or more takes llama.cpp's tiled attention path and has to agree as well. Reference:
    /// scripts/golden/greedy-ids (built against llama.cpp b11434) run as
    /// `greedy-ids -m models/SmolLM2-135M-Instruct.Q4_1.gguf -n 32 -f PROMPT` where PROMPT holds the first 700 bytes
    /// of /usr/share/common-licenses/GPL-3 (151 prompt tokens).
    @Test("a 151-token prompt (llama.cpp's batched attention path) continues with llama.cpp's tokens")
    func longPrompt() async throws {
        let text = try #require(FileManager.default.contents(atPath: "/usr/share/common-licenses/GPL-3"))
        let prompt = String(decoding: text.prefix(700), as: UTF8.self)
        let session = try SmolLM2Fixtures.session()
        let ids = try session.tokenize(prompt, addSpecial: true, parseSpecial: true)
        #expect(ids.count == 151)
        let expected: [Int32] = [
            523, 325, 198, 14036, 288, 1449, 617, 523, 722, 357, 30, 216, 378, 28807, 4660, 4837, 198, 20981, 314, 253,
            1767, 3586, 282, 260, 28807, 4660, 4837, 6966, 28, 198, 5210, 314,
        ]
        let result = try await SmolLM2Fixtures.generate(
            session, .tokens(ids), GenerationParameters(maxTokens: 32, sampling: .greedy))
        #expect(result.ids == expected)
    }

    @Test("cancelling the consumer stops generation within one token")
    func cancellation() async throws {
        let session = try SmolLM2Fixtures.session()
        let prompt = try session.tokenize("Once upon a time", addSpecial: true, parseSpecial: false)
        let counter = TokenCounter()
        let task = Task {
            for try await event in session.generate(
                .tokens(prompt), parameters: GenerationParameters(maxTokens: 400, sampling: .greedy))
            {
                if case .token = event {
                    if await counter.increment() == 1 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
        }
        _ = await task.result
        let seen = await counter.value
        // The generation loop checks the cancellation flag before every token, and its stream's buffer keeps it at
        // most `GenerationLoop.eventsAhead` (4) events ahead of the consumer, however starved the consumer is: it stops within a few
        // tokens of the cancel.
        #expect(seen >= 1 && seen < 8)
        // `tokenCount` waits for the generation thread: it stopped long before the 400 requested.
        #expect(session.tokenCount < prompt.count + 8)
        // The session is usable afterwards.
        session.reset()
        let again = try await SmolLM2Fixtures.generate(
            session, .tokens(prompt), GenerationParameters(maxTokens: 2, sampling: .greedy))
        #expect(again.ids.count == 2 && again.reason == .maxTokens)
    }

    @Test("stop strings end generation without being shown, even across token boundaries")
    func stopStrings() async throws {
        let session = try SmolLM2Fixtures.session()
        let full = try await SmolLM2Fixtures.generate(
            session, .text("Hello my name is", parseSpecial: false),
            GenerationParameters(maxTokens: 24, sampling: .greedy))
        let scalars = Array(full.text.unicodeScalars)
        try #require(scalars.count > 20)
        let stop = String(String.UnicodeScalarView(scalars[9..<16]))
        let expected = try #require(full.text.range(of: stop)).lowerBound
        session.reset()
        let stopped = try await SmolLM2Fixtures.generate(
            session, .text("Hello my name is", parseSpecial: false),
            GenerationParameters(maxTokens: 24, sampling: .greedy, stopStrings: [stop]))
        #expect(stopped.reason == .stopString)
        #expect(stopped.text == String(full.text[..<expected]))
    }

    @Test("streamed text is the tokenizer's decoding; a conversation continues; sampling is reproducible")
    func streamingAndState() async throws {
        let session = try SmolLM2Fixtures.session()
        let parameters = GenerationParameters(maxTokens: 12, sampling: SamplingParameters(temperature: 0.9, seed: 5))
        let first = try await SmolLM2Fixtures.generate(
            session, .text("The weather today", parseSpecial: false), parameters)
        #expect(first.ids.count == 12)
        #expect(first.text == session.detokenize(first.ids, renderSpecial: true))
        let held = session.tokenCount
        let more = try await SmolLM2Fixtures.generate(session, .text(" and tomorrow", parseSpecial: false), parameters)
        #expect(session.tokenCount > held + more.ids.count)
        session.reset()
        #expect(session.tokenCount == 0)
        let replay = try await SmolLM2Fixtures.generate(
            session, .text("The weather today", parseSpecial: false), parameters)
        #expect(replay.ids == first.ids)
    }

    @Test("the chat template is the model's (ChatML) and a chat answer ends at <|im_end|>")
    func chat() async throws {
        let session = try SmolLM2Fixtures.session()
        let prompt = try session.applyChatTemplate(
            [.system("Be brief."), .user("What is 2 + 2?")], addAssistantPrompt: true)
        #expect(
            prompt
                == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n"
        )
        let answer = try await SmolLM2Fixtures.generate(
            session, .text(prompt, parseSpecial: true), GenerationParameters(maxTokens: 64, sampling: .greedy))
        #expect(answer.reason == .endOfGeneration)
        #expect(answer.text.contains("4"))
        #expect(!answer.text.contains("<|im_end|>"))
    }

    @Test("evaluateLogits returns the requested rows and leaves the session empty")
    func logitRows() throws {
        let session = try SmolLM2Fixtures.session()
        let tokens = try session.tokenize("The capital of France is", addSpecial: true, parseSpecial: false)
        let all = try session.evaluateLogits(tokens, rows: nil)
        let tail = try session.evaluateLogits(tokens, rows: (tokens.count - 2)..<tokens.count)
        #expect(all.count == tokens.count && tail.count == 2 && all[0].count == 49152)
        #expect(Array(all.suffix(2)) == tail)
        #expect(session.tokenCount == 0)
        let best = tail[1].indices.max { tail[1][$0] < tail[1][$1] } ?? 0
        #expect(session.detokenize([Int32(best)], renderSpecial: false) == " Paris")
    }
}

@Suite(
    "SmolLM2 weight repacking",
    .enabled(if: SmolLM2Fixtures.model != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct SmolLM2RepackingTests {
    static func session(_ options: [String: JSONValue]) throws -> PureSwiftSession {
        let url = try #require(SmolLM2Fixtures.model)
        return try PureSwiftSession(
            path: url.path, options: ModelLoadOptions(threads: 2, contextLength: 512, engineOptions: options))
    }

    @Test("repacked Q4_1 weights give the same logits, bit for bit, as the mapped ones; a bad option is an error")
    func sameLogits() throws {
        let repacked = try Self.session([:])
        let mapped = try Self.session(["repack-weights": .bool(false)])
        // Long enough for two slices of the runner's batch and llama.cpp's tiled attention path.
        let text = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 16)
        let tokens = try repacked.tokenize(text, addSpecial: true, parseSpecial: false)
        #expect(tokens.count > 128)
        let rows = (tokens.count - 3)..<tokens.count
        let a = try repacked.evaluateLogits(tokens, rows: rows)
        let b = try mapped.evaluateLogits(tokens, rows: rows)
        #expect(a.map { $0.map(\.bitPattern) } == b.map { $0.map(\.bitPattern) })
        #expect(throws: SanadError.self) { try Self.session(["repack-weights": .string("yes")]) }
    }
}

/// Counts streamed tokens across tasks.
actor TokenCounter {
    private(set) var value = 0
    func increment() -> Int {
        value += 1
        return value
    }
}
