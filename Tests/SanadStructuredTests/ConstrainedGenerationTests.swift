import Foundation
import PureSwiftBackend
import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

// Constrained generation on SmolLM2-135M-Instruct with the pure-Swift engine: every output parses and validates,
// and the constraint leaves an already valid greedy output as it was.

enum SmolLM2Model {
    static let url = TestPaths.model(TestPaths.smolLM2)

    static func session() throws -> PureSwiftSession {
        let url = try #require(url)
        return try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: 2, contextLength: 512))
    }
}

@Suite(
    "Constrained generation on SmolLM2", .serialized,
    .enabled(if: SmolLM2Model.url != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct ConstrainedGenerationTests {
    static let person: JSONValue = [
        "type": "object",
        "properties": [
            "name": ["type": "string", "minLength": 1, "maxLength": 24],
            "age": ["type": "integer", "minimum": 0, "maximum": 120],
            "city": ["type": "string", "maxLength": 24],
        ],
        "required": ["name", "age"], "additionalProperties": false,
    ]
    /// The forms assistant's reply.
    static let form: JSONValue = [
        "type": "object",
        "properties": [
            "updates": [
                "type": "array", "maxItems": 3,
                "items": [
                    "type": "object",
                    "properties": [
                        "fieldId": ["type": "string", "pattern": "^[a-z][a-zA-Z]{0,15}$"],
                        "value": ["anyOf": [["type": "string", "maxLength": 20], ["type": "integer"]]],
                    ],
                    "required": ["fieldId", "value"],
                ],
            ],
            "nextStepId": ["enum": ["contact", "income", "review", "done"]],
            "birthDate": ["type": "string", "format": "date"],
        ],
        "required": ["updates", "nextStepId"],
    ]

    @Test("outputs parse and validate for schemas × prompts × seeds")
    func validOutputs() async throws {
        try await Self.expectValidOutputs(try SmolLM2Model.session())
    }

    /// The person and form schemas × 2 prompts × 3 seeds (greedy, then temperature 0.9) on `session`: every output
    /// parses and validates. Shared with the llama engine's tests.
    static func expectValidOutputs(_ session: any InferenceSession) async throws {
        let prompts = [
            "Give the name, age and city of a person as JSON.",
            "The user says: my name is Sara and I am 34. Reply with the form update as JSON.",
        ]
        for schema in [person, form] {
            let constraint = try SchemaConstraint(schema: schema)
            for prompt in prompts {
                for seed: UInt64 in [0, 1, 2] {
                    let sampling =
                        seed == 0 ? SamplingParameters.greedy : SamplingParameters(temperature: 0.9, seed: seed)
                    // SmolLM2's own template opens with its default system turn here; one sampled document on the
                    // llama engine then runs past 160 tokens, so the limit leaves room (the limit does not change
                    // what is sampled, only where it is cut).
                    let text = try session.applyChatTemplate([.user(prompt)], addAssistantPrompt: true)
                    let value = try await StructuredGeneration.generate(
                        session: session, prompt: text, constraint: constraint,
                        parameters: GenerationParameters(maxTokens: 320, sampling: sampling))
                    #expect(validates(value, schema, root: schema), "\(value) for \(prompt) seed \(seed)")
                }
            }
        }
    }

    @Test("an unconstrained greedy output that is already valid comes out the same")
    func unchangedWhenValid() async throws {
        let session = try SmolLM2Model.session()
        // Few-shot prompts whose greedy continuation starts with a document (checked below, not assumed).
        let cases: [(String, JSONValue)] = [
            ("\"red\"\n\"green\"\n", ["type": "string", "maxLength": 20]),
            ("\"Paris\"\n\"London\"\n\"Rome\"\n", ["type": "string"]),
            (
                "a = {\"id\": 1, \"ok\": true}; b = {\"id\": 2, \"ok\": false}; c = {\"id\": 3, \"ok\": true}; d = ",
                [
                    "type": "object", "properties": ["id": ["type": "integer"], "ok": ["type": "boolean"]],
                    "required": ["id", "ok"],
                ]
            ),
        ]
        var compared = 0
        for (prompt, schema) in cases {
            let compiled = try CompiledSchema(schema: schema)
            var parameters = GenerationParameters(maxTokens: 48, sampling: .greedy)
            session.reset()
            var free = ""
            for try await event in session.generate(.text(prompt, parseSpecial: false), parameters: parameters) {
                if case .token(_, let piece) = event { free += piece }
            }
            // The longest prefix of the free output that is a whole valid document, if any.
            var matcher = JSONMatcher(compiled)
            var document: String?
            for (i, b) in free.utf8.enumerated() {
                guard let next = matcher.advanced(by: b) else { break }
                matcher = next
                if matcher.isFinished { document = String(decoding: Array(free.utf8.prefix(i + 1)), as: UTF8.self) }
            }
            guard let document else { continue }
            parameters.constraint = SchemaConstraint(compiled)
            session.reset()
            var constrained = ""
            for try await event in session.generate(.text(prompt, parseSpecial: false), parameters: parameters) {
                if case .token(_, let piece) = event { constrained += piece }
            }
            #expect(constrained == document, "for \(prompt.debugDescription)")
            compared += 1
        }
        #expect(compared >= 2, "too few unconstrained outputs was a valid document to compare with")
    }
}
