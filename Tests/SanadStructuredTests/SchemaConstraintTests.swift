import SanadCore
import SanadStructured
import Testing

@Suite("JSON schema constraint stage")
struct SchemaConstraintTests {
    /// A toy vocabulary: `"`, the two bytes of `ش` as separate tokens, `ab`, `{`, `}`, `1`, and an end token.
    static let vocabulary = ConstraintVocabulary(
        pieces: [[0x22], [0xD8], [0xB4], Array("ab".utf8), [0x7B], [0x7D], [0x31], []], endOfGeneration: [7])

    func allowed(_ stage: any LogitConstraint) throws -> [Int32] {
        var logits = [Float](repeating: 0, count: 8)
        try logits.withUnsafeMutableBufferPointer { try stage.mask($0) }
        return logits.indices.filter { logits[$0] > -.infinity }.map(Int32.init)
    }

    @Test("masks what cannot continue, follows a character split across tokens, ends only when complete")
    func masks() throws {
        for sampling in [SamplingParameters(temperature: 1, topK: 0), .greedy] {
            let constraint = try SchemaConstraint(
                schema: .object(["type": .string("string"), "maxLength": .number(2)]))
            let stage = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: sampling)
            #expect(try allowed(stage) == [0])
            stage.accept(0)
            if !sampling.isGreedy {
                #expect(try allowed(stage) == [0, 1, 3, 4, 5, 6])
            }
            stage.accept(1)
            if !sampling.isGreedy { #expect(try allowed(stage) == [2]) }
            stage.accept(2)
            stage.accept(0)
            #expect(try allowed(stage) == [7])
        }
    }

    @Test("no allowed token is an error, never an unconstrained pick")
    func failsClosed() throws {
        let constraint = try SchemaConstraint(schema: .object(["type": .string("boolean")]))
        let stage = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: .greedy)
        #expect(throws: SanadError.self) { try allowed(stage) }
        let sampler = Sampler(parameters: SamplingParameters(temperature: 1, topK: 0), constraint: stage)
        var logits = [Float](repeating: 0, count: 8)
        #expect(throws: SanadError.self) {
            try logits.withUnsafeMutableBufferPointer { try sampler.sample($0, history: []) }
        }
    }
}
