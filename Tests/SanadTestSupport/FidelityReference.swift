import Foundation

/// What the pure-Swift (and BLAS) engine is held to, exactly: llama.cpp b11434's AVX2 arithmetic. On a machine that
/// can run the reference build (`LlamaTools.reference`) its tools are run live; elsewhere (no AVX2, arm64, or not
/// installed) the committed fixtures in Tests/Fixtures/llama-b11434, which that build wrote and which hold on every
/// CPU because the pure-Swift engine's arithmetic does not depend on the CPU.
public enum FidelityReference {
    /// Where the expectations come from, for test messages: the live tools, or the fixtures and why.
    public static var source: String {
        if let tools = LlamaTools.reference { return "live \(tools)" }
        return
            "committed fixtures Tests/Fixtures/llama-b11434 (no live reference: \(LlamaTools.referenceUnavailable ?? "?"))"
    }

    /// Printed once per test run, so a log says which reference the fidelity tests used.
    public static let announce: Void = {
        print("Fidelity reference: \(source)")
    }()

    /// One expected greedy continuation.
    public struct Greedy: Sendable {
        public let promptIDs: [Int32]
        public let ids: [Int32]
        /// The generated text; nil when it is not valid UTF-8 on its own (cut inside a character).
        public let text: String?
        public let stoppedAtEOG: Int32?
        /// Per generated token, the 5 largest logits of its step (token, logit), exact float32 values.
        public let topLogits: [[(id: Int32, logit: Float)]]
    }

    /// The expected greedy 32-token continuation of `prompt` (a case of scripts/golden/prompts.json) for the model
    /// `modelKey` ("smollm2" or "gemma3", the fixture's suffix).
    public static func greedy(_ prompt: GoldenInputs.Case, modelKey: String, model: URL) throws -> Greedy {
        _ = announce
        if let tools = LlamaTools.reference {
            let run = try tools.greedy(model: model, prompt: prompt.text)
            return Greedy(
                promptIDs: run.promptIDs, ids: run.ids, text: String(validating: run.text, as: UTF8.self),
                stoppedAtEOG: run.stoppedAtEOG, topLogits: run.topLogits)
        }
        let file = fixtureName("greedy", modelKey)
        guard let fixture: GreedyFile = decodeFixture(file) else {
            throw LlamaToolError("Tests/Fixtures/\(file) is missing or unreadable; run scripts/make-golden")
        }
        guard let c = fixture.cases.first(where: { $0.name == prompt.name && $0.prompt == prompt.text }) else {
            throw LlamaToolError(
                "Tests/Fixtures/\(file) has no case '\(prompt.name)' with this prompt; run scripts/make-golden")
        }
        return Greedy(
            promptIDs: c.prompt_ids, ids: c.ids, text: c.text_hex == nil ? c.text : nil, stoppedAtEOG: c.stopped_at_eog,
            topLogits: (c.top_logits ?? []).map { step in
                step.compactMap { pair in pair.count == 2 ? (Int32(pair[0]), Float(pair[1])) : nil }
            })
    }

    /// The perplexity `llama-perplexity -m MODEL -f TEXT -c context` prints (default batch, 2 threads), 4 decimals.
    public static func perplexity(modelKey: String, model: URL, textFile: String, context: Int) throws -> (
        ppl: Double, chunks: Int
    ) {
        _ = announce
        if let tools = LlamaTools.reference {
            let run = try tools.perplexity(model: model, textFile: textFile, context: context, batch: 2048)
            return (run.ppl, run.runningPPL.count)
        }
        let file = fixtureName("perplexity", modelKey)
        guard let fixture: PerplexityFile = decodeFixture(file), fixture.n_ctx == context, fixture.input == textFile
        else {
            throw LlamaToolError(
                "Tests/Fixtures/\(file) is missing, unreadable or not for \(textFile) at context \(context)")
        }
        return (fixture.ppl, fixture.running_ppl_after_chunk.count)
    }

    /// `llama-b11434/KIND.json` for SmolLM2, `llama-b11434/KIND-MODEL.json` for another model key.
    public static func fixtureName(_ kind: String, _ modelKey: String) -> String {
        "llama-b11434/\(kind)\(modelKey == "smollm2" ? "" : "-" + modelKey).json"
    }

    // MARK: The committed fixtures (scripts/make-golden)

    /// One case of greedy.json.
    public struct GreedyFileCase: Decodable, Sendable {
        public let name: String
        public let prompt: String
        public let prompt_ids: [Int32]
        public let ids: [Int32]
        public let text: String
        public let text_hex: String?
        public let stopped_at_eog: Int32?
        public let top_logits: [[[Double]]]?
    }

    /// greedy.json / greedy-gemma3.json.
    public struct GreedyFile: Decodable, Sendable {
        public let n_predict: Int
        public let cases: [GreedyFileCase]
    }

    /// perplexity.json / perplexity-gemma3.json.
    public struct PerplexityFile: Decodable, Sendable {
        public let input: String
        public let n_ctx: Int
        public let ppl: Double
        public let final_estimate_line: String
        public let running_ppl_after_chunk: [Double]
    }

    /// A committed fixture, or nil when it is missing or unreadable.
    public static func decodeFixture<T: Decodable>(_ name: String) -> T? {
        guard let data = FileManager.default.contents(atPath: TestPaths.fixture(name).path) else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }
}
