import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

// The token budget of a schema constraint: the shortest completion it counts is the true one (checked against a
// breadth-first search over bytes), a comfortable budget changes nothing, and every budget from the shortest
// document up ends in a whole valid document, whatever the "model" prefers.

@Suite("JSON schema constraint within a token budget")
struct TokenBudgetTests {
    /// Every byte as a token, some longer pieces (so that a token can overshoot), and an end token.
    static let vocabulary: ConstraintVocabulary = {
        var pieces = (0...255).map { [UInt8($0)] }
        for text in [
            "{\"", "\":", "\",", "\"}", "true", "null", "false", "12", "-3", "0.", "abc", "red", "é", "],", "[{", "}]",
            "\":\"", ", \"", "\": ", "\\n", "2024-", "yes", "XY", "aaaaaaaa", "{\"id\":", "\"name\":\"", "1000",
        ] {
            pieces.append(Array(text.utf8))
        }
        pieces.append([])
        return ConstraintVocabulary(pieces: pieces, endOfGeneration: [Int32(pieces.count - 1)])
    }()
    static var end: Int32 { Int32(vocabulary.pieces.count - 1) }

    /// The fewest bytes from `start` to a complete document, by breadth-first search over `alphabet` (nil past
    /// the search's bounds).
    func searchShortest(_ start: JSONMatcher, alphabet: [UInt8]) -> Int? {
        var frontier = [start]
        var seen: Set<JSONMatcher> = [start]
        for depth in 0..<48 {
            var next: [JSONMatcher] = []
            for state in frontier {
                if state.isComplete { return depth }
                for b in alphabet {
                    if let s = state.advanced(by: b), seen.insert(s).inserted { next.append(s) }
                }
            }
            if next.isEmpty || seen.count > 20_000 { return nil }
            frontier = next
        }
        return nil
    }

    @Test("the shortest completion the constraint counts is the shortest a search over bytes finds")
    func shortestIsExact() throws {
        var rng = SeededGenerator(seed: 45)
        var compared = 0
        for _ in 0..<40 {
            let schema = SchemaMaker.make(&rng)
            let compiled = try CompiledSchema(schema: schema)
            var documents = DocumentMaker(root: schema, rng: rng)
            let document = Array(documents.text(schema, depth: 0).utf8)
            rng = documents.rng
            // Bytes the shortest completions can use: the schema's own text (keys, literals), structure, digits,
            // a filler letter, escapes and the patterns' letters.
            let alphabet = Array(
                Set(Array(schema.jsonString.utf8) + Array("{}[],:\"-.0123456789aAZ\\nu".utf8) + [0x80, 0x90, 0xA0])
                    .subtracting([0x20]))
            var matcher = JSONMatcher(compiled)
            var positions = Set((0..<3).map { _ in rng.int(0...document.count) })
            positions.insert(0)
            for (i, b) in ([0] + document).enumerated() {
                if i > 0 { matcher = try #require(matcher.advanced(by: b), "\(schema.jsonString): \(document)") }
                guard positions.contains(i) else { continue }
                guard let expected = searchShortest(matcher, alphabet: alphabet) else { continue }
                #expect(
                    matcher.shortestCompletion == expected,
                    "\(schema.jsonString) after \(String(decoding: document.prefix(i), as: UTF8.self))")
                compared += 1
            }
            if let expected = searchShortest(JSONMatcher(compiled), alphabet: alphabet) {
                #expect(SchemaConstraint(compiled).shortestDocument == expected, "\(schema.jsonString)")
            }
        }
        #expect(compared > 60)
    }

    /// Runs a stage over random logits (a "model" with random preferences) until the end token or the budget;
    /// returns the text and whether it ended with the end token.
    func run(_ stage: any LogitConstraint, sampling: SamplingParameters, budget: Int, rng: inout SeededGenerator)
        throws -> (text: [UInt8], ended: Bool)
    {
        let sampler = Sampler(parameters: sampling, constraint: stage)
        var text: [UInt8] = []
        var written = 0
        while written < budget {
            var logits = (0..<Self.vocabulary.pieces.count).map { _ in Float(rng.int(0...1000)) / 100 }
            let token = try logits.withUnsafeMutableBufferPointer { try sampler.sample($0, history: []) }
            if token == Self.end { return (text, true) }
            text += Self.vocabulary.pieces[Int(token)]
            written += 1
        }
        return (text, false)
    }

    @Test("every budget from the shortest document to three times it ends in a valid document")
    func alwaysCloses() throws {
        var rng = SeededGenerator(seed: 4506)
        let samplings = [SamplingParameters.greedy, SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0)]
        for i in 0..<120 {
            let schema = SchemaMaker.make(&rng)
            let constraint = try SchemaConstraint(schema: schema)
            let shortest = try #require(constraint.shortestDocument, "\(schema.jsonString)")
            let budget = rng.int(shortest...(3 * shortest))
            let sampling = samplings[i % 2]
            let stage = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: sampling, tokenBudget: budget)
            let (text, _) = try run(stage, sampling: sampling, budget: budget, rng: &rng)
            let shown = "\(schema.jsonString) with \(budget) tokens: \(String(decoding: text, as: UTF8.self))"
            #expect(constraint.isComplete(text), "\(shown)")
            let value = try StrictJSON().parse(text)
            #expect(validates(value, schema, root: schema), "\(shown)")
        }
    }

    @Test("a budget below the shortest document is refused before generating, naming the minimum")
    func refusesShortBudget() throws {
        let schema: JSONValue = [
            "type": "object", "properties": ["name": ["type": "string", "minLength": 2]], "required": ["name"],
        ]
        let constraint = try SchemaConstraint(schema: schema)
        #expect(constraint.shortestDocument == 13)  // {"name":"aa"}
        _ = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: .greedy, tokenBudget: 13)
        let error = #expect(throws: SanadError.self) {
            _ = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: .greedy, tokenBudget: 12)
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("at least 13"))
    }

    @Test("with a comfortable budget the stage allows exactly what it allows without one")
    func comfortableBudgetChangesNothing() throws {
        var rng = SeededGenerator(seed: 7)
        let full = SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0)
        for _ in 0..<30 {
            let schema = SchemaMaker.make(&rng)
            let constraint = try SchemaConstraint(schema: schema)
            let free = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: full)
            let budgeted = try constraint.makeStage(vocabulary: Self.vocabulary, sampling: full, tokenBudget: 100_000)
            for _ in 0..<40 {
                var a = [Float](repeating: 0, count: Self.vocabulary.pieces.count)
                var b = a
                try a.withUnsafeMutableBufferPointer { try free.mask($0) }
                try b.withUnsafeMutableBufferPointer { try budgeted.mask($0) }
                #expect(a == b, "\(schema.jsonString)")
                let allowed = a.indices.filter { a[$0] > -.infinity }
                guard let pick = allowed.randomElement(using: &rng), Int32(pick) != Self.end else { break }
                free.accept(Int32(pick))
                budgeted.accept(Int32(pick))
            }
        }
    }
}
