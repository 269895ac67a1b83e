import Foundation
import LlamaCppBackend
import SanadCore
import SanadTestSupport
import Testing

/// What the tests that need the real libllama and a model use.
enum LlamaFixture {
    /// A b11434 library is meant to be present: `SANAD_LIBLLAMA` names an existing file, or scripts/install-llama's
    /// stamp is there. Tests gated on this *expect* the library to be accepted (they fail if the guard refuses it).
    static let libraryInstalled: Bool = libraryPath != nil

    /// The b11434 library the tests expect: `SANAD_LIBLLAMA`, else scripts/install-llama's.
    static let libraryPath: String? = {
        let env = ProcessInfo.processInfo.environment
        if let path = env["SANAD_LIBLLAMA"], !path.isEmpty {
            return FileManager.default.fileExists(atPath: path) ? path : nil
        }
        let installed = "/usr/local/lib/libllama.so"
        return FileManager.default.fileExists(atPath: "/usr/local/share/sanad/llama-b11434.stamp")
            && FileManager.default.fileExists(atPath: installed) ? installed : nil
    }()

    static var smolLM2: URL? { TestPaths.model(TestPaths.smolLM2) }
    static var gemma3: URL? { TestPaths.model(TestPaths.gemma3) }
    static var ready: Bool { libraryInstalled && smolLM2 != nil }
    static var gemma3Ready: Bool { libraryInstalled && gemma3 != nil }

    /// One compute thread: when tests run in parallel on few cores, ggml's spinning thread pool slows down badly.
    static func session(context: Int = 512, threads: Int = 1, model: URL? = smolLM2) async throws
        -> any InferenceSession
    {
        let url = try #require(model)
        return try await LlamaCppBackend().loadModel(
            at: url, options: ModelLoadOptions(threads: threads, contextLength: context))
    }

    /// Runs a generation to its end: token ids, text, and how it finished.
    static func collect(_ stream: AsyncThrowingStream<GenerationEvent, Error>) async throws -> (
        ids: [Int32], text: String, stop: StopReason?, stats: GenerationStats?
    ) {
        var ids: [Int32] = []
        var text = ""
        for try await event in stream {
            switch event {
            case .token(let id, let t):
                ids.append(id)
                text += t
            case .finished(let reason, let stats):
                return (ids, text, reason, stats)
            }
        }
        return (ids, text, nil, nil)
    }

    // MARK: Reference data written by scripts/make-golden

    struct GreedyCase: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let prompt: String
        let prompt_ids: [Int32]
        let ids: [Int32]
        let text: String
        let text_hex: String?
        let stopped_at_eog: Int32?
        /// Per generated step: the 5 largest logits as [token id, logit].
        let top_logits: [[[Double]]]?
        var testDescription: String { name }
    }

    struct TokenizeCase: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let ids: [Int32]
        let ids_with_special: [Int32]
        var testDescription: String { name }
    }

    private struct Cases<C: Decodable>: Decodable { let cases: [C] }

    static let greedyURL = TestPaths.fixture("llama-b11434/greedy.json")
    static let tokenizeURL = TestPaths.fixture("llama-b11434/tokenize.json")
    static let perplexityURL = TestPaths.fixture("llama-b11434/perplexity.json")

    static func load<C: Decodable>(_ url: URL, _ type: C.Type) -> [C] {
        guard let data = try? Data(contentsOf: url) else { return [] }
        do {
            return try JSONDecoder().decode(Cases<C>.self, from: data).cases
        } catch {
            // A present but unreadable fixture must not silently disable tests.
            return []
        }
    }

    static let greedyGemma3URL = TestPaths.fixture("llama-b11434/greedy-gemma3.json")
    static let tokenizeGemma3URL = TestPaths.fixture("llama-b11434/tokenize-gemma3.json")

    static let greedyCases: [GreedyCase] = load(greedyURL, GreedyCase.self)
    static let tokenizeCases: [TokenizeCase] = load(tokenizeURL, TokenizeCase.self)
    static let greedyGemma3Cases: [GreedyCase] = load(greedyGemma3URL, GreedyCase.self)
    static let tokenizeGemma3Cases: [TokenizeCase] = load(tokenizeGemma3URL, TokenizeCase.self)

    /// Checks one greedy case: the same prompt tokens, generated ids, text and stop as llama-simple.
    static func checkGreedy(_ c: GreedyCase, model: URL?) async throws {
        let session = try await LlamaFixture.session(context: c.prompt_ids.count + 32, model: model)
        #expect(try session.tokenize(c.prompt, addSpecial: true, parseSpecial: true) == c.prompt_ids)
        let run = try await LlamaFixture.collect(
            session.generate(
                .text(c.prompt, parseSpecial: true),
                parameters: GenerationParameters(maxTokens: 32, sampling: .greedy)))
        #expect(run.ids == c.ids)
        if c.text_hex == nil { #expect(run.text == c.text) }
        #expect(run.stop == (c.stopped_at_eog == nil ? .maxTokens : .endOfGeneration))
    }

    /// Checks one tokenizer case: plain text, and with BOS and special tokens.
    static func checkTokenize(_ c: TokenizeCase, model: URL?) async throws {
        let session = try await LlamaFixture.session(context: 64, model: model)
        #expect(try session.tokenize(c.text, addSpecial: false, parseSpecial: false) == c.ids)
        #expect(try session.tokenize(c.text, addSpecial: true, parseSpecial: true) == c.ids_with_special)
    }
}
