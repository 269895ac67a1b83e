import Foundation
import LlamaCppBackend
import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

// JSON-schema-constrained generation on the llama engine: the schema translated to GBNF for libllama's grammar
// sampler. Needs the b11434 libllama (scripts/setup) and SmolLM2.

enum LlamaModel {
    static let libraryInstalled =
        FileManager.default.fileExists(atPath: "/usr/local/share/sanad/llama-b11434.stamp")
        || ProcessInfo.processInfo.environment["SANAD_LIBLLAMA"].map { FileManager.default.fileExists(atPath: $0) }
            == true
    /// Installed and proved on this CPU by the llama engine's probe (LlamaCppTests fails once where it is not).
    static let libraryComputes = libraryInstalled && LlamaCppBackend().availability.isAvailable
    static var ready: Bool { libraryComputes && SmolLM2Model.url != nil }

    static func session() async throws -> any InferenceSession {
        let url = try #require(SmolLM2Model.url)
        return try await LlamaCppBackend().loadModel(
            at: url, options: ModelLoadOptions(threads: 2, contextLength: 512))
    }
}

@Suite(
    "JSON schema on the llama engine", .serialized,
    .enabled(
        if: LlamaModel.ready, "libllama b11434 (scripts/setup) or models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct LlamaGrammarTests {
    @Test("outputs parse and validate for the pure-swift tests' schemas × prompts × seeds")
    func validOutputs() async throws {
        try await ConstrainedGenerationTests.expectValidOutputs(try await LlamaModel.session())
    }

    @Test("random schemas: every complete output parses and validates")
    func randomSchemas() async throws {
        let session = try await LlamaModel.session()
        var rng = SeededGenerator(seed: 20)
        var complete = 0
        for c in 0..<48 {
            let schema = SchemaMaker.make(&rng)
            let constraint = try SchemaConstraint(schema: schema)
            let sampling = SamplingParameters(temperature: 0.8, seed: UInt64(c))
            do {
                let value = try await StructuredGeneration.generate(
                    session: session, prompt: "Write a JSON value:\n", constraint: constraint,
                    parameters: GenerationParameters(maxTokens: 96, sampling: sampling))
                #expect(validates(value, schema, root: schema), "\(c): \(value) for \(schema)")
                complete += 1
            } catch let error as SanadError {
                // Only an output cut by the token limit is allowed here (a long array of long strings).
                #expect("\(error)".contains("raise the token limit"), "\(c): \(error) for \(schema)")
            }
        }
        #expect(complete >= 24, "only \(complete) of 48 outputs were complete within 96 tokens")
    }

    @Test("a grammar libllama refuses is an error, not an unconstrained run")
    func refusedGrammar() async throws {
        let session = try await LlamaModel.session()
        var parameters = GenerationParameters(maxTokens: 8)
        parameters.constraint = GBNFGrammar("root ::= missing-rule\n")
        var pieces = 0
        await #expect(throws: LlamaCppError.self) {
            for try await event in session.generate(.text("Hello", parseSpecial: false), parameters: parameters) {
                if case .token = event { pieces += 1 }
            }
        }
        #expect(pieces == 0)
    }

    @Test("a raw GBNF grammar constrains the output")
    func rawGrammar() async throws {
        let session = try await LlamaModel.session()
        var parameters = GenerationParameters(maxTokens: 16, sampling: .greedy)
        parameters.constraint = GBNFGrammar(#"root ::= ("yes" | "no") "!""# + "\n")
        var text = ""
        var stop: StopReason?
        for try await event in session.generate(.text("Is water wet?", parseSpecial: false), parameters: parameters) {
            switch event {
            case .token(_, let piece): text += piece
            case .finished(let reason, _): stop = reason
            }
        }
        #expect(stop == .endOfGeneration && (text == "yes!" || text == "no!"), "\(text.debugDescription)")
    }
}

@Suite("GBNF from a schema")
struct SchemaGrammarTests {
    @Test("what a grammar cannot say is an error, never dropped")
    func refusals() throws {
        let both = try CompiledSchema(schema: ["type": "string", "pattern": "^[a-z]+$", "maxLength": 4])
        #expect(throws: SchemaError.self) { try both.gbnf() }
        let noWhole = try CompiledSchema(schema: ["type": "number", "minimum": 2.2, "maximum": 2.8])
        #expect(throws: SchemaError.self) { try noWhole.gbnf() }
    }

    @Test("the start rule is root, and integer bounds become digit ranges")
    func shape() throws {
        let grammar = try CompiledSchema(schema: ["type": "integer", "minimum": -5, "maximum": 30]).gbnf()
        #expect(grammar.hasPrefix("root ::= n0\n"))
        let rule = #"n0 ::= (([0-9] | ("1" [0-9] | [2-2] [0-9]{1} | "3" [0-0])) | "-" ([1-5]))"#
        #expect(grammar.contains(rule), "\(grammar)")
    }
}
