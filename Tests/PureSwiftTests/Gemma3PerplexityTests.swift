import Foundation
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

/// llama-perplexity's running perplexity on the GPL-3 text (Tests/Fixtures/llama-b11434/perplexity-gemma3.json,
/// made by scripts/make-golden with the AVX2 reference build).
struct Gemma3PerplexityReference: Decodable {
    let n_ctx: Int
    let running_ppl_after_chunk: [Double]
}

@Suite(
    "Gemma 3 perplexity against llama.cpp",
    .enabled(if: TestPaths.model(TestPaths.gemma3) != nil, "models/gemma-3-270m-q4_k_m.gguf is absent"))
struct Gemma3PerplexityTests {
    /// The first four chunks (a quarter of the text, to keep the test short) against the running perplexity that
    /// llama-perplexity printed after its fourth chunk.
    @Test("perplexity on the GPL-3 text at context 512 equals llama-perplexity's to the 4 decimals it prints")
    func perplexity() throws {
        let reference: Gemma3PerplexityReference = try #require(
            FidelityReference.decodeFixture("llama-b11434/perplexity-gemma3.json"))
        let chunks = 4
        try #require(reference.n_ctx == 512 && reference.running_ppl_after_chunk.count >= chunks)
        let url = try #require(TestPaths.model(TestPaths.gemma3))
        let session = try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: 2, contextLength: 512))
        let (ppl, counted) = try llamaPerplexity(
            session, textFile: "/usr/share/common-licenses/GPL-3", context: 512, maxChunks: chunks)
        #expect(counted == chunks)
        let expected = reference.running_ppl_after_chunk[chunks - 1]
        #expect(abs(ppl - expected) <= 0.00005 + 1e-9, "pure-swift PPL \(ppl), llama.cpp \(expected)")
    }
}
