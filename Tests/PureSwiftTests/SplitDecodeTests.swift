import Foundation
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import Testing

/// From 512 cache cells on (more than 256 positions), llama.cpp splits a generation step's attention over an F16
/// cache across its threads by cells (ggml's split decode path), which rounds differently from one pass over the
/// positions; the engine follows it (SelfAttention's `attendSplit`). Checked on the shipped models: a prompt of
/// about 300 tokens decoded as one batch, then 32 steps of one token each, every step's 10 largest logits bit for
/// bit against the reference build's greedy-ids run with the same thread count, under every kernel build. Gemma 3
/// also past its 512-position window (a prompt of about 600 tokens), where its sliding layers split the window's
/// cells the same way (greedy-ids keeps llama.cpp's default full-size SWA cache: position p in cell p).
@Suite(
    "generation steps past 256 positions against llama.cpp's split decode path",
    .enabled(if: LlamaTools.reference != nil, "\(LlamaTools.referenceUnavailable ?? "")"))
struct SplitDecodeTests {
    /// The first `characters` characters of the GPL-3 text (1400: about 300 tokens on either model).
    static func prompt(_ characters: Int) -> String? {
        (try? String(contentsOfFile: SyntheticFidelity.textFile, encoding: .utf8)).map { String($0.prefix(characters)) }
    }

    @Test(
        "one token at a time past 256 positions: llama.cpp's logits, bit for bit",
        arguments: [
            (TestPaths.smolLM2, 2, 1400), (TestPaths.smolLM2, 3, 1400), (TestPaths.gemma3, 2, 1400),
            (TestPaths.gemma3, 2, 2800),
        ])
    func steps(_ name: String, _ threads: Int, _ characters: Int) throws {
        let model = try #require(TestPaths.model(name), "models/\(name) is absent")
        let prompt = try #require(Self.prompt(characters), "\(SyntheticFidelity.textFile) is absent")
        let tools = try #require(LlamaTools.reference)
        let reference = try tools.greedy(
            model: model, prompt: prompt, maxTokens: 32, topK: 10, extra: ["-t", "\(threads)"])
        let session = try PureSwiftSession(
            path: model.path, options: ModelLoadOptions(threads: threads, contextLength: 1024, batchSize: 512))
        let promptIDs = try session.tokenize(prompt, addSpecial: true, parseSpecial: true)
        #expect(promptIDs == reference.promptIDs, "\(name): prompt tokens")
        // The long prompt puts every step past the 512-position window.
        let least = characters > 1400 ? 512 : 256
        try #require(promptIDs.count > least && promptIDs.count + 32 <= 1024, "\(promptIDs.count) prompt tokens")
        for build in KernelBuilds.runnable {
            SyntheticFidelity.checkSteps(
                session, build, reference, threads: threads, contextLength: 1024,
                label: "\(name) \(build.name), \(threads) threads, \(promptIDs.count) prompt tokens")
        }
    }
}
