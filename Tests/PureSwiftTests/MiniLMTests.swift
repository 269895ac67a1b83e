import Foundation
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import SanadTokenizers
import Testing

// all-MiniLM-L6-v2 in the pure-Swift engine against Hugging Face `tokenizers` 0.23.3 (token ids) and an exact NumPy
// float64 BERT (embeddings): Tests/Fixtures/minilm, made by scripts/golden/make_minilm_golden.py.

enum MiniLMFixtures {
    static let folder = TestPaths.model("all-MiniLM-L6-v2")

    struct TokenLine: Decodable {
        let text: String
        let ids: [Int32]
    }
    struct TokenFile: Decodable { let lines: [TokenLine] }

    struct Sentence: Decodable {
        let text: String
        let ids: [Int32]
        let embedding: [Float]
    }
    struct EmbeddingFile: Decodable {
        let max_seq_length: Int
        let sentences: [Sentence]
    }

    static func decode<T: Decodable>(_ name: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: TestPaths.fixture("minilm/" + name)))
    }
}

@Suite("all-MiniLM-L6-v2", .enabled(if: MiniLMFixtures.folder != nil, "needs models/all-MiniLM-L6-v2 (scripts/setup)"))
struct MiniLMTests {
    @Test("WordPiece ids equal Hugging Face tokenizers on every corpus line")
    func tokenizerMatchesGolden() throws {
        let tokenizer = try WordPieceTokenizer(folder: try #require(MiniLMFixtures.folder))
        let file: MiniLMFixtures.TokenFile = try MiniLMFixtures.decode("tokens.json")
        #expect(file.lines.count >= 20)
        for line in file.lines {
            #expect(tokenizer.encode(line.text) == line.ids, "\(line.text.debugDescription)")
        }
    }
}

extension MiniLMTests {
    @Test("Embeddings reach cosine 0.9999 to the float64 reference, batched, and the long text is cut and reported")
    func embeddingsMatchGolden() async throws {
        let model = try PureSwiftEmbeddingModel(
            at: try #require(MiniLMFixtures.folder), options: ModelLoadOptions(threads: 2))
        let file: MiniLMFixtures.EmbeddingFile = try MiniLMFixtures.decode("embeddings.json")
        #expect(model.dimension == 384)
        #expect(model.encoder.configuration.maxSequenceLength == file.max_seq_length)
        for s in file.sentences { #expect(model.tokens(s.text).ids == s.ids, "\(s.text.prefix(40))") }
        let batch = try await model.embedReportingTruncation(file.sentences.map(\.text))
        #expect(batch.truncated == [file.sentences.count - 1])
        for (s, v) in zip(file.sentences, batch.vectors) {
            let cosine = zip(s.embedding, v).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            #expect(cosine >= 0.9999, "\(s.text.prefix(40)): cosine \(cosine)")
        }
        // One at a time gives the same vectors as the batch (no padding leaks into a sentence).
        for (s, v) in zip(file.sentences.prefix(3), batch.vectors) {
            let alone = try await model.embed([s.text])[0]
            #expect(zip(alone, v).allSatisfy { abs($0 - $1) < 1e-5 })
        }
    }
}
