import Foundation
import LlamaCppBackend
import SanadCore
import SanadNative
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

    /// The probe's verdict on that library (a forward pass of a tiny model in a child process, `sanad-probe`):
    /// the tests compute with libllama in this process only after it passed, so a library that dies on this CPU
    /// fails one test (`InstalledLibraryProbeTests`) with the probe's message instead of killing the test run.
    static let probe: NativeProbe.Verdict? = libraryPath.map { NativeProbe.verdict(kind: "llama", library: $0) }
    static var libraryComputes: Bool { probe?.passed == true }

    static var smolLM2: URL? { TestPaths.model(TestPaths.smolLM2) }
    static var gemma3: URL? { TestPaths.model(TestPaths.gemma3) }
    static var ready: Bool { libraryComputes && smolLM2 != nil }
    static var gemma3Ready: Bool { libraryComputes && gemma3 != nil }

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

    // MARK: The same native build's tools, run live

    /// The tools of the native build whose library the engine loads (SanadTestSupport's `LlamaTools.native`), or nil
    /// with `toolsUnavailable` saying why. Same library, same machine: the engine must equal them exactly, whatever
    /// code paths (AVX2, AVX-512, NEON) the build took.
    static let tools: LlamaTools? = findTools().tools
    static let toolsUnavailable: String = findTools().why ?? ""

    private static func findTools() -> (tools: LlamaTools?, why: String?) {
        guard let tools = LlamaTools.native else { return (nil, LlamaTools.nativeUnavailable) }
        let installed = LlamaTools.prefix.appendingPathComponent("lib/libllama.so").resolvingSymlinksInPath()
        guard let libraryPath, URL(fileURLWithPath: libraryPath).resolvingSymlinksInPath() == installed else {
            return (nil, "SANAD_LIBLLAMA is not \(installed.path), whose tools these are; set SANAD_LLAMA_PREFIX too")
        }
        return (tools, nil)
    }

    static let prompts = GoldenInputs.prompts("smollm2")
    static let gemma3Prompts = GoldenInputs.prompts("gemma3")
    static let corpus = GoldenInputs.corpus

    /// One greedy prompt: the same prompt tokens, generated ids, text and stop as the native build's llama-simple
    /// (text) and greedy-ids (ids; its text is checked against llama-simple's too).
    static func checkGreedy(_ prompt: GoldenInputs.Case, model: URL?) async throws {
        let url = try #require(model)
        let tools = try #require(tools)
        let expected = try tools.greedy(model: url, prompt: prompt.text)
        let simple = try tools.simple(model: url, prompt: prompt.text)
        #expect(simple.count > expected.text.count && simple.dropLast().suffix(expected.text.count) == expected.text)
        let session = try await LlamaFixture.session(context: expected.promptIDs.count + 32, model: url)
        #expect(try session.tokenize(prompt.text, addSpecial: true, parseSpecial: true) == expected.promptIDs)
        let run = try await LlamaFixture.collect(
            session.generate(
                .text(prompt.text, parseSpecial: true),
                parameters: GenerationParameters(maxTokens: 32, sampling: .greedy)))
        #expect(run.ids == expected.ids)
        if let text = String(validating: expected.text, as: UTF8.self) { #expect(run.text == text) }
        #expect(run.stop == (expected.stoppedAtEOG == nil ? .maxTokens : .endOfGeneration))
    }

    /// One tokenizer text: plain, and with BOS and special tokens, as the native build's llama-tokenize.
    static func checkTokenize(_ c: GoldenInputs.Case, model: URL?) async throws {
        let url = try #require(model)
        let tools = try #require(tools)
        let session = try await LlamaFixture.session(context: 64, model: url)
        #expect(
            try session.tokenize(c.text, addSpecial: false, parseSpecial: false)
                == (try tools.tokenize(model: url, text: c.text, special: false)))
        #expect(
            try session.tokenize(c.text, addSpecial: true, parseSpecial: true)
                == (try tools.tokenize(model: url, text: c.text, special: true)))
    }
}
