import Foundation
import SanadCore
import Testing

/// A model whose output is fixed, for the checks around embedding models.
final class FixedEmbeddingModel: EmbeddingModel {
    let vectors: [[Float]]
    init(_ vectors: [[Float]]) { self.vectors = vectors }
    var dimension: Int { vectors.first?.count ?? 0 }
    func embed(_ texts: [String]) async throws -> [[Float]] { Array(vectors.prefix(texts.count)) }
}

/// Non-finite embeddings (issue 43): a model with NaN weights must fail naming itself, not embed to zeros.
@Suite("Finite embeddings")
struct FiniteEmbeddingTests {
    @Test("A NaN or infinity in any vector is an error naming the model and the text")
    func nonFinite() async throws {
        for bad: Float in [.nan, .infinity, -.infinity] {
            let model = FiniteEmbeddingModel(
                FixedEmbeddingModel([[0.6, 0.8], [bad, 0]]), name: "/models/broken.gguf")
            await #expect { _ = try await model.embed(["ok", "bad"]) } throws: {
                "\($0)".contains("/models/broken.gguf") && "\($0)".contains("text 2")
            }
            await #expect(throws: SanadError.self) { _ = try await model.embedReportingTruncation(["ok", "bad"]) }
        }
    }

    @Test("Finite vectors pass through unchanged")
    func finite() async throws {
        let model = FiniteEmbeddingModel(FixedEmbeddingModel([[0.6, 0.8]]), name: "m")
        #expect(try await model.embed(["a"]) == [[0.6, 0.8]])
        #expect(model.dimension == 2)
    }
}
