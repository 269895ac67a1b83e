import SanadCore
import SanadStructured
import SanadTestSupport
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

    @Test("indexing the vocabulary is paid once, by the first stage that needs a full mask, and reported apart")
    func preparationIsCountedOnce() throws {
        let vocabulary = ConstraintVocabulary(
            pieces: Self.vocabulary.pieces, endOfGeneration: Self.vocabulary.endOfGeneration)
        let constraint = try SchemaConstraint(schema: .object(["type": .string("string")]))
        let full = SamplingParameters(temperature: 1, topK: 0)
        var logits = [Float](repeating: 0, count: vocabulary.pieces.count)
        let first = Sampler(
            parameters: full, constraint: try constraint.makeStage(vocabulary: vocabulary, sampling: full))
        _ = try logits.withUnsafeMutableBufferPointer { try first.sample($0, history: []) }
        #expect(first.constraintPreparationSeconds > 0)
        #expect(first.constraintPreparationSeconds == first.constraint?.preparationSeconds)
        // A second generation over the same vocabulary finds the index made.
        let second = Sampler(
            parameters: full, constraint: try constraint.makeStage(vocabulary: vocabulary, sampling: full))
        logits = [Float](repeating: 0, count: vocabulary.pieces.count)
        _ = try logits.withUnsafeMutableBufferPointer { try second.sample($0, history: []) }
        #expect(second.constraintPreparationSeconds == 0)
        #expect(second.constraintSeconds > 0)
    }

    @Test(
        "the full mask (the vocabulary trie, with its walk inside strings) allows exactly the tokens that can continue (200 cases)"
    )
    func fullMaskIsExact() throws {
        // Every single byte (so any document can be fed token by token), then random pieces over JSON's bytes,
        // UTF-8 sequences, escapes and closing quotes in the middle of a piece.
        var pieces: [[UInt8]] = (0...255).map { [UInt8($0)] }
        var vocabularyRNG = SeededGenerator(seed: 11)
        let alphabet = Array("abcxyz019 .,:{}[]\"\\/-enutrfl".utf8) + [0xD8, 0xB4, 0xE2, 0x80, 0x94, 0xF0, 0x9F]
        let fragments = ["\", \"", "\":", "\"}", "\"]", "\\u00", "\\n", "ش", "—", "null", "true", "\"a", "1.5e"]
        pieces += fragments.map { Array($0.utf8) }
        for _ in 0..<1500 {
            pieces.append((0..<vocabularyRNG.int(2...6)).map { _ in vocabularyRNG.pick(alphabet) })
        }
        let end = Int32(pieces.count)
        pieces.append([])
        let vocabulary = ConstraintVocabulary(pieces: pieces, endOfGeneration: [end])
        try forAll(cases: 200) { rng, c in
            let schema = SchemaMaker.make(&rng)
            let compiled = try CompiledSchema(schema: schema)
            var documents = DocumentMaker(root: schema, rng: rng)
            let text = Array(documents.text(schema, depth: 0).utf8)
            rng = documents.rng
            // One stage masks at several points of the document, so its cache of string walks is used again.
            let stops = (0..<4).map { _ in rng.int(0...text.count) }.sorted()
            let stage = try SchemaConstraint(compiled).makeStage(
                vocabulary: vocabulary, sampling: SamplingParameters(temperature: 1, topK: 0))
            var fed = 0
            for stop in stops {
                for b in text[fed..<stop] { stage.accept(Int32(b)) }
                fed = stop
                var logits = [Float](repeating: 0, count: pieces.count)
                try logits.withUnsafeMutableBufferPointer { try stage.mask($0) }
                let masked = Set(logits.indices.filter { logits[$0] > -.infinity }.map(Int32.init))
                let state = try #require(JSONMatcher(compiled).advanced(by: text[0..<stop]), c.label)
                var expected = Set<Int32>()
                for (i, piece) in pieces.enumerated() where !piece.isEmpty && state.advanced(by: piece) != nil {
                    expected.insert(Int32(i))
                }
                if state.isComplete { expected.insert(end) }
                #expect(
                    masked == expected,
                    "\(c.label) at \(stop): \(masked.symmetricDifference(expected).prefix(5).map { String(decoding: pieces[Int($0)], as: UTF8.self) })"
                )
            }
        }
    }
}
