import Foundation
import LlamaCppBackend
import SanadCore
import SanadTestSupport
import Testing

func cosine(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
}

@Suite(
    "llama backend embeddings on SmolLM2", .serialized,
    .enabled(if: LlamaFixture.ready, "needs libllama b11434 and SmolLM2"))
struct LlamaEmbeddingTests {
    /// SmolLM2 names no pooling, so the backend pools by mean unless told otherwise.
    @Test(arguments: [nil, "mean", "last"] as [String?])
    func unitVectorsThatRankSimilarSentencesHigher(_ pooling: String?) async throws {
        let url = try #require(LlamaFixture.smolLM2)
        var options = ModelLoadOptions(threads: 1, contextLength: 128)
        if let pooling { options.engineOptions["pooling"] = .string(pooling) }
        let model = try await LlamaCppBackend().loadEmbeddingModel(at: url, options: options)
        #expect(model.dimension == 576)
        let texts = [
            "The cat sat on the mat.",
            "A cat was sitting on the mat.",
            "Quarterly revenue rose by five percent.",
        ]
        let vectors = try await model.embed(texts)
        #expect(vectors.count == 3)
        for v in vectors {
            #expect(v.count == 576)
            #expect(abs(cosine(v, v) - 1) < 1e-4)
        }
        #expect(cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]))
        #expect(cosine(vectors[0], vectors[1]) > cosine(vectors[1], vectors[2]))
        // The same text twice gives the same vector (the cache is cleared between texts).
        let again = try await model.embed([texts[0]])
        #expect(zip(again[0], vectors[0]).allSatisfy { abs($0 - $1) < 1e-5 })
    }

    @Test func anUnknownPoolingIsAnError() async throws {
        let url = try #require(LlamaFixture.smolLM2)
        let options = ModelLoadOptions(contextLength: 64, engineOptions: ["pooling": .string("max")])
        await #expect(throws: LlamaCppError.self) {
            _ = try await LlamaCppBackend().loadEmbeddingModel(at: url, options: options)
        }
    }

    @Test func aTextLongerThanTheContextThrowsPromptTooLong() async throws {
        let url = try #require(LlamaFixture.smolLM2)
        let model = try await LlamaCppBackend().loadEmbeddingModel(
            at: url, options: ModelLoadOptions(threads: 1, contextLength: 16))
        await #expect(throws: SanadError.self) {
            _ = try await model.embed([String(repeating: "word ", count: 40)])
        }
    }
}
