import PureSwiftBackend
import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

// Issue #45 item 6 on the real model: random schemas × a random token limit between the shortest document and
// three times it, SmolLM2 on the pure-Swift engine (the constraint stage) and on the llama engine (libllama's
// grammar with the budget guard); every output must parse and validate (before the budget was known to the
// constraint, outputs cut mid-string at -n did not). scripts/structured-budget-eval runs the same check at scale
// against the CLI, validated by Python's jsonschema.

@Suite(
    "JSON within the token limit on SmolLM2", .serialized,
    .enabled(if: SmolLM2Model.url != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct TokenBudgetModelTests {
    @Test("random schemas × random -n from the shortest document to 3× it: every output parses and validates")
    func randomSchemasCloseWithinTheLimit() async throws {
        try await Self.expectClosing(try SmolLM2Model.session(), seed: 45_06)
    }

    /// 24 random schemas, each with a random limit from its shortest document to 3× it, greedy and sampled, on
    /// `session`: every output parses and validates. Shared with the llama engine's test.
    static func expectClosing(_ session: any InferenceSession, seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        for i in 0..<24 {
            let schema = SchemaMaker.make(&rng)
            let constraint = try SchemaConstraint(schema: schema)
            let shortest = try #require(constraint.shortestDocument)
            let limit = rng.int(shortest...(3 * shortest))
            let shown = schema.jsonString
            let prompt = try session.applyChatTemplate(
                [.user("Reply with one JSON document" + (shown.utf8.count < 400 ? " for this schema: \(shown)" : "."))],
                addAssistantPrompt: true)
            let sampling = i % 3 == 0 ? SamplingParameters(temperature: 0.9, seed: UInt64(i)) : .greedy
            let value = try await StructuredGeneration.generate(
                session: session, prompt: prompt, constraint: constraint,
                parameters: GenerationParameters(maxTokens: limit, sampling: sampling))
            #expect(validates(value, schema, root: schema), "\(shown) with -n \(limit): \(value.jsonString)")
        }
    }

    @Test("a limit below the shortest document is refused before any token, naming the minimum")
    func refusesBelowTheShortest() async throws {
        let session = try SmolLM2Model.session()
        let schema: JSONValue = [
            "type": "object",
            "properties": [
                "id": ["type": "integer"], "tags": ["type": "array", "minItems": 2, "items": ["type": "string"]],
            ],
            "required": ["id", "tags"],
        ]
        let constraint = try SchemaConstraint(schema: schema)
        let shortest = try #require(constraint.shortestDocument)
        #expect(shortest == 23)  // {"id":0,"tags":["",""]}
        await #expect(throws: SanadError.self) {
            _ = try await StructuredGeneration.generate(
                session: session, prompt: "JSON:", constraint: constraint,
                parameters: GenerationParameters(maxTokens: shortest - 1, sampling: .greedy))
        }
        let value = try await StructuredGeneration.generate(
            session: session, prompt: "JSON:", constraint: constraint,
            parameters: GenerationParameters(maxTokens: shortest, sampling: .greedy))
        #expect(validates(value, schema, root: schema), "\(value.jsonString)")
    }
}

@Suite(
    "JSON within the token limit on the llama engine", .serialized,
    .enabled(
        if: LlamaModel.ready, "libllama b11434 (scripts/setup) or models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct LlamaTokenBudgetTests {
    @Test("libllama's grammar with the budget guard: random schemas × random -n all parse and validate")
    func randomSchemasCloseWithinTheLimit() async throws {
        try await TokenBudgetModelTests.expectClosing(try await LlamaModel.session(), seed: 45_07)
    }
}
