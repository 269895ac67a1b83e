import Foundation
import GGUF
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

// The pure-Swift engine on Gemma-3-270M Q4_K_M against llama.cpp b11434's own output
// (Tests/Fixtures/llama-b11434/greedy-gemma3.json, made by scripts/make-golden; see the README there).
//
// Its Q4_K, Q5_0 and Q6_K products do not yet reproduce llama.cpp's rounding bit for bit (issue 18), and a model this
// small turns single roundings into visible logit differences: llama.cpp's own AVX2 and AVX-512 builds differ from
// each other by as much (on SmolLM2, which the engine matches bit for bit, the two builds differ by up to 2.1, mean
// 0.17; on Gemma, `sanad compare -f GPL-3 --chunks 1` measured pure-swift against the AVX-512 build at max 4.3,
// mean 0.22, top-1 agreement 96.5 %). So the logits are held to a tolerance, and greedy continuations to llama.cpp's
// tokens until a step where llama.cpp's own choice was close. Measured on the 15 prompts (2026-11-24): largest
// difference over llama.cpp's five best logits 0.55-2.84 per prompt; 8 continuations identical, 7 parting at
// margins of 0.008-0.32. The engine's results are the same on every CPU, so these bounds hold everywhere.

/// A greedy reference with llama.cpp's five best logits at every step.
struct Gemma3GreedyCase: Decodable, CustomTestStringConvertible, Sendable {
    let name: String
    let prompt: String
    let prompt_ids: [Int32]
    let ids: [Int32]
    /// Per generated token: five (id, logit) pairs, best first.
    let top_logits: [[[Double]]]
    let stopped_at_eog: Int32?
    var testDescription: String { name }
}

struct Gemma3GreedyFixture: Decodable {
    let n_predict: Int
    let cases: [Gemma3GreedyCase]
}

enum Gemma3Fixtures {
    static let model = TestPaths.model(TestPaths.gemma3)
    static let greedy: Gemma3GreedyFixture? = FidelityReference.decodeFixture("llama-b11434/greedy-gemma3.json")
    /// The largest difference allowed between a pure-Swift logit and llama.cpp's (one of its five best).
    static let logitTolerance = 3.0
    /// The largest margin by which llama.cpp preferred its token where the continuations part.
    static let nearTie = 0.5

    static func session(context: Int = 512, threads: Int = 2) throws -> PureSwiftSession {
        let url = try #require(model)
        return try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: threads, contextLength: context))
    }
}

@Suite(
    "Gemma 3 against llama.cpp",
    .enabled(if: Gemma3Fixtures.model != nil, "models/gemma-3-270m-q4_k_m.gguf is absent"))
struct Gemma3EngineTests {
    @Test("the configuration comes from the file's gemma3 keys: five sliding-window layers per global one")
    func configuration() throws {
        let file = try GGUFFile(path: try #require(Gemma3Fixtures.model).path)
        let c = try Gemma3Configuration(file: file)
        #expect(c.layers == 18 && c.embedding == 640 && c.heads == 4 && c.kvHeads == 1 && c.headDimension == 256)
        #expect(c.feedForward == 2048 && c.vocabularySize == 262_144)
        #expect(c.slidingWindow == 512)
        #expect(c.isLocalLayer.enumerated().filter { !$0.element }.map(\.offset) == [5, 11, 17])
        #expect(c.rope.mode == .neox && c.rope.frequencyBase == 1_000_000 && c.localRoPE.frequencyBase == 10_000)
        #expect(c.queryScale == 0.0625 && c.finalLogitSoftCap == 0)
    }

    @Test("the greedy reference exists and covers at least 8 prompts")
    func greedyFixturePresent() throws {
        let fixture = try #require(
            Gemma3Fixtures.greedy, "Tests/Fixtures/llama-b11434/greedy-gemma3.json is unreadable")
        #expect(fixture.cases.count >= 8)
    }

    @Test(
        "teacher-forced logits: llama.cpp's five best at every step, within the tolerance",
        arguments: Gemma3Fixtures.greedy?.cases ?? [])
    func logits(_ reference: Gemma3GreedyCase) throws {
        let session = try Gemma3Fixtures.session()
        let tokens = reference.prompt_ids + reference.ids
        let first = reference.prompt_ids.count - 1
        let rows = try session.evaluateLogits(tokens, rows: first..<(first + reference.top_logits.count))
        var largest = 0.0
        for (step, best) in reference.top_logits.enumerated() {
            for pair in best {
                largest = max(largest, abs(Double(rows[step][Int(pair[0])]) - pair[1]))
            }
        }
        #expect(largest <= Gemma3Fixtures.logitTolerance, "\(reference.name): \(largest)")
    }

    @Test(
        "greedy generation picks llama.cpp's tokens until llama.cpp had a near tie",
        arguments: Gemma3Fixtures.greedy?.cases ?? [])
    func greedy(_ reference: Gemma3GreedyCase) async throws {
        let session = try Gemma3Fixtures.session()
        let n = Gemma3Fixtures.greedy?.n_predict ?? 32
        let result = try await SmolLM2Fixtures.generate(
            session, .tokens(reference.prompt_ids), GenerationParameters(maxTokens: n, sampling: .greedy))
        #expect(try session.tokenize(reference.prompt, addSpecial: true, parseSpecial: true) == reference.prompt_ids)
        guard
            let i = (0..<min(result.ids.count, reference.ids.count)).first(where: {
                result.ids[$0] != reference.ids[$0]
            })
        else {
            #expect(result.ids == reference.ids)
            return
        }
        // Where the continuations part, the pure-Swift pick is among llama.cpp's five best and nearly its first.
        let best = reference.top_logits[i]
        let ours = try #require(best.first { Int32($0[0]) == result.ids[i] }, "\(reference.name): token \(i)")
        #expect(best[0][1] - ours[1] <= Gemma3Fixtures.nearTie, "\(reference.name): token \(i)")
    }
}
