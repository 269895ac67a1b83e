import Foundation
import SanadCore
import Testing

/// A scripted engine for the generation loop: token ids 0…255 are the single bytes, `bos` and `eog` are special,
/// and ids from 300 on are the multi-byte pieces a test names. The sampler picks the script's tokens in order
/// (the last one again once the script runs out). The "KV cache" is a list of the tokens evaluated.
final class ScriptedEvaluator: TokenEvaluator {
    static let bos: Int32 = 256
    static let eog: Int32 = 257
    static let firstPiece: Int32 = 300

    let contextLength: Int
    let addsBOS: Bool
    let bosToken: Int32? = ScriptedEvaluator.bos
    let batchSize: Int
    var pieces: [[UInt8]]
    var script: [Int32]
    /// What the cache holds.
    private(set) var cache: [Int32] = []
    /// Each evaluation's tokens, in order.
    private(set) var evaluations: [[Int32]] = []
    /// What the sampler was shown at each pick.
    private(set) var sampledAfter: [[Int32]] = []
    private var next = 0

    init(contextLength: Int = 64, addsBOS: Bool = true, batchSize: Int = 4, pieces: [String] = [], script: [Int32]) {
        self.contextLength = contextLength
        self.addsBOS = addsBOS
        self.batchSize = batchSize
        self.pieces = pieces.map { Array($0.utf8) }
        self.script = script
    }

    /// Script tokens for `text`, one byte each.
    static func bytes(_ text: String) -> [Int32] { text.utf8.map { Int32($0) } }
    /// The id of the test's `i`th piece.
    static func piece(_ i: Int) -> Int32 { firstPiece + Int32(i) }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        (addSpecial && addsBOS ? [Self.bos] : []) + Self.bytes(text)
    }

    func checkTokens(_ tokens: [Int32]) throws {
        if let bad = tokens.first(where: { !isValid($0) }) {
            throw SanadError.engine("token \(bad) is not in the script")
        }
    }

    private func isValid(_ t: Int32) -> Bool {
        (0...Self.eog).contains(t) || (Self.firstPiece..<(Self.firstPiece + Int32(pieces.count))).contains(t)
    }

    func pieceBytes(_ token: Int32) -> [UInt8] {
        switch token {
        case 0...255: return [UInt8(token)]
        case Self.bos: return Array("<s>".utf8)
        case Self.eog: return Array("</s>".utf8)
        default: return pieces[Int(token - Self.firstPiece)]
        }
    }

    func isEndOfGeneration(_ token: Int32) -> Bool { token == Self.eog }

    func evaluate(_ tokens: [Int32], at position: Int, cancellation: GenerationCancellation) throws -> Int {
        #expect(position == cache.count, "the loop's position and the cache agree")
        #expect(cache.count + tokens.count <= contextLength, "the loop never overfills the cache")
        evaluations.append(tokens)
        var done = 0
        while done < tokens.count {
            if cancellation.isCancelled { break }
            let end = min(done + batchSize, tokens.count)
            cache += tokens[done..<end]
            done = end
        }
        return done
    }

    func clearCache() { cache = [] }

    func makeSampler(_ parameters: SamplingParameters, history: [Int32]) throws -> any TokenSampler {
        #expect(history == cache)
        return Picker(self)
    }

    final class Picker: TokenSampler {
        let engine: ScriptedEvaluator
        init(_ engine: ScriptedEvaluator) { self.engine = engine }
        func next(history: [Int32]) -> Int32 {
            engine.sampledAfter.append(history)
            let token = engine.script[min(engine.next, engine.script.count - 1)]
            engine.next += 1
            return token
        }
    }
}

/// What one run of the loop streamed.
struct Run {
    var events: [GenerationEvent] = []
    var tokens: [(id: Int32, text: String)] {
        events.compactMap { event -> (Int32, String)? in
            guard case .token(let id, let text) = event else { return nil }
            return (id, text)
        }
    }
    var ids: [Int32] { tokens.map(\.id) }
    var pieces: [String] { tokens.map(\.text) }
    var text: String { pieces.joined() }
    var finished: (reason: StopReason, stats: GenerationStats)? {
        guard case .finished(let reason, let stats) = events.last else { return nil }
        return (reason, stats)
    }
    var reason: StopReason? { finished?.reason }
    var stats: GenerationStats? { finished?.stats }
}

func run(
    _ loop: GenerationLoop, _ input: GenerationInput, _ parameters: GenerationParameters,
    cancelAfterTokens: Int? = nil
) throws -> Run {
    var result = Run()
    let cancellation = GenerationCancellation()
    try loop.run(input, parameters: parameters, cancellation: cancellation) { event in
        result.events.append(event)
        if let n = cancelAfterTokens, result.ids.count >= n { cancellation.cancel() }
    }
    return result
}

func greedy(_ maxTokens: Int, stops: [String] = [], truncate: Bool = false) -> GenerationParameters {
    GenerationParameters(maxTokens: maxTokens, sampling: .greedy, stopStrings: stops, truncatePrompt: truncate)
}

@Suite("Generation loop (scripted engine)")
struct GenerationLoopTests {
    @Test("tokens stream as text until max tokens; the last token waits to go first next time")
    func maxTokens() throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("Hello, world"))
        let loop = GenerationLoop(evaluator: engine)
        let first = try run(loop, .text("Hi", parseSpecial: false), greedy(5))
        #expect(first.text == "Hello")
        #expect(first.ids == ScriptedEvaluator.bytes("Hello"))
        #expect(first.reason == .maxTokens)
        #expect(first.stats?.promptTokens == 3 && first.stats?.generatedTokens == 5)
        // The prompt (with BOS) and four generated tokens are in the cache; the fifth is pending.
        #expect(engine.cache == [ScriptedEvaluator.bos] + ScriptedEvaluator.bytes("HiHell"))
        #expect(loop.tokenCount == engine.cache.count + 1)
        // The sampler saw the whole context each time.
        #expect(engine.sampledAfter.first == [ScriptedEvaluator.bos] + ScriptedEvaluator.bytes("Hi"))
        // A second request continues: no BOS, the pending token first.
        let second = try run(loop, .text("!", parseSpecial: false), greedy(2))
        #expect(second.stats?.promptTokens == 2)
        #expect(engine.evaluations.dropLast().last == ScriptedEvaluator.bytes("o!"))
        #expect(second.text == ", ")
        // Zero tokens: the prompt is read, nothing generated.
        loop.reset()
        let none = try run(loop, .text("Hi", parseSpecial: false), greedy(0))
        #expect(none.ids.isEmpty && none.reason == .maxTokens && engine.cache.count == 3)
    }

    @Test("an end-of-generation token ends the text and is not shown")
    func endOfGeneration() throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("ok") + [ScriptedEvaluator.eog])
        let loop = GenerationLoop(evaluator: engine)
        let result = try run(loop, .text("?", parseSpecial: false), greedy(10))
        #expect(result.text == "ok" && result.ids == ScriptedEvaluator.bytes("ok"))
        #expect(result.reason == .endOfGeneration)
        #expect(result.stats?.generatedTokens == 2)
        // Text held back for a stop string comes out at the end token.
        let held = ScriptedEvaluator(script: ScriptedEvaluator.bytes("a</") + [ScriptedEvaluator.eog])
        let heldRun = try run(
            GenerationLoop(evaluator: held), .text("?", parseSpecial: false), greedy(10, stops: ["</end>"]))
        #expect(heldRun.text == "a</" && heldRun.reason == .endOfGeneration)
    }

    @Test("a stop string split across pieces ends generation and is not shown; an earlier one wins")
    func stopStrings() throws {
        let pieces = ["Hello </", "en", "d> world"]
        let engine = ScriptedEvaluator(pieces: pieces, script: (0..<3).map(ScriptedEvaluator.piece))
        let result = try run(
            GenerationLoop(evaluator: engine), .text("x", parseSpecial: false), greedy(10, stops: ["</end>", "world"]))
        #expect(result.text == "Hello ")
        #expect(result.reason == .stopString)
        // No text of the stop string was streamed before it completed.
        #expect(result.pieces == ["Hello ", "", ""])
        // Text that only began like a stop string comes out when it turns into something else.
        let partial = ScriptedEvaluator(
            pieces: ["a </", "em>"], script: [ScriptedEvaluator.piece(0), ScriptedEvaluator.piece(1)])
        let partialRun = try run(
            GenerationLoop(evaluator: partial), .text("x", parseSpecial: false), greedy(2, stops: ["</end>"]))
        #expect(partialRun.pieces == ["a ", "</em>"])
        #expect(partialRun.reason == .maxTokens)
    }

    @Test(
        "multi-byte characters split across tokens stream whole, never as U+FFFD",
        arguments: ["مرحبا بالعالم", "emoji 😀 and 👨‍👩‍👧", "€ ß ع 𓀀"])
    func multiByteCharacters(_ text: String) throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes(text) + [ScriptedEvaluator.eog])
        let result = try run(GenerationLoop(evaluator: engine), .text(">", parseSpecial: false), greedy(1000))
        #expect(result.text == text)
        #expect(result.pieces.allSatisfy { !$0.unicodeScalars.contains("\u{FFFD}") })
        // Tokens that end inside a character carry no text; the one that completes it carries all of it.
        #expect(result.pieces.contains(""))
    }

    @Test("a character cut by the end of generation is dropped, not written as U+FFFD")
    func cutCharacterAtTheEnd() throws {
        let emoji = Array("😀".utf8).map { Int32($0) }
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("ab") + emoji)
        let result = try run(GenerationLoop(evaluator: engine), .text(">", parseSpecial: false), greedy(4))
        #expect(result.ids.count == 4)
        #expect(result.text == "ab")
        let stopped = ScriptedEvaluator(
            script: ScriptedEvaluator.bytes("ab") + emoji.prefix(2) + [ScriptedEvaluator.eog])
        #expect(try run(GenerationLoop(evaluator: stopped), .text(">", parseSpecial: false), greedy(9)).text == "ab")
    }

    @Test("a prompt that does not fit is refused, or truncated to its end leaving room for max tokens, BOS kept")
    func truncation() throws {
        let engine = ScriptedEvaluator(contextLength: 16, script: ScriptedEvaluator.bytes("xyz"))
        let loop = GenerationLoop(evaluator: engine)
        let prompt = String(repeating: "abcdefghij", count: 3)  // 30 tokens + BOS
        #expect(throws: SanadError.promptTooLong(tokens: 31, context: 16)) {
            try run(loop, .text(prompt, parseSpecial: false), greedy(4))
        }
        #expect(loop.tokenCount == 0)
        let truncated = try run(loop, .text(prompt, parseSpecial: false), greedy(4, truncate: true))
        // 16 positions, 4 left for generation: BOS and the prompt's last 11 tokens.
        #expect(truncated.stats?.promptTokens == 12)
        #expect(
            engine.evaluations.first == [ScriptedEvaluator.bos] + ScriptedEvaluator.bytes(String(prompt.suffix(11))))
        #expect(truncated.text == "xyzz" && truncated.reason == .maxTokens)
        // Asking for more than the context: the prompt keeps at least half of it.
        loop.reset()
        let half = try run(loop, .tokens(ScriptedEvaluator.bytes(prompt)), greedy(100, truncate: true))
        #expect(half.stats?.promptTokens == 8)
        #expect(half.reason == .contextFull)
        #expect(half.ids.count == 9)  // positions 8…15 evaluated, the token sampled after 15 is the last
    }

    @Test("an empty prompt starts from BOS when the model adds one, else it is an error")
    func emptyPrompt() throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("a"))
        let result = try run(GenerationLoop(evaluator: engine), .tokens([]), greedy(1))
        #expect(engine.evaluations == [[ScriptedEvaluator.bos]])
        #expect(result.text == "a" && result.stats?.promptTokens == 1)
        let noBOS = ScriptedEvaluator(addsBOS: false, script: ScriptedEvaluator.bytes("a"))
        #expect(throws: SanadError.self) {
            try run(GenerationLoop(evaluator: noBOS), .text("", parseSpecial: false), greedy(1))
        }
        #expect(noBOS.evaluations.isEmpty)
        // After a prompt has been read, an empty prompt continues from what the session holds.
        let loop = GenerationLoop(evaluator: noBOS)
        try loop.append(ScriptedEvaluator.bytes("hi"))
        let more = try run(loop, .tokens([]), greedy(1))
        #expect(more.text == "a" && more.stats?.promptTokens == 0)
    }

    @Test("a bad token id is the engine's error, before anything is evaluated")
    func badTokens() throws {
        let engine = ScriptedEvaluator(script: [65])
        #expect(throws: SanadError.self) { try run(GenerationLoop(evaluator: engine), .tokens([65, 9999]), greedy(1)) }
        #expect(engine.evaluations.isEmpty)
    }

    @Test("a cancel stops the loop before the next token; one during the prompt stops it between batches")
    func cancellation() throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("abcdefgh"))
        let loop = GenerationLoop(evaluator: engine)
        let result = try run(loop, .text("go", parseSpecial: false), greedy(100), cancelAfterTokens: 2)
        #expect(result.ids == ScriptedEvaluator.bytes("ab"))
        #expect(result.reason == .cancelled)
        #expect(loop.tokenCount == 3 + 2)
        // Cancelled before it starts: nothing is read.
        loop.reset()
        let cancellation = GenerationCancellation()
        cancellation.cancel()
        var events: [GenerationEvent] = []
        try loop.run(.text("go", parseSpecial: false), parameters: greedy(5), cancellation: cancellation) {
            events.append($0)
        }
        #expect(events == [.finished(.cancelled, GenerationStats())])
        #expect(loop.tokenCount == 0)
    }

    @Test(
        "a consumer that cancels, or drops the stream, stops the generation thread within a few tokens",
        arguments: [true, false])
    func streamCancellation(cancelTask: Bool) async throws {
        let engine = ScriptedEvaluator(contextLength: 100_000, script: ScriptedEvaluator.bytes("na"))
        let loop = GenerationLoop(evaluator: engine)
        let input = GenerationInput.text("go", parseSpecial: false)
        let taken = try await Task {
            var tokens = 0
            for try await event in loop.generate(input, parameters: greedy(50_000), threadName: "test") {
                guard case .token = event else { continue }
                tokens += 1
                // Either cancel the consuming task (the stream ends at the next event) or leave the loop, which
                // drops the stream and its iterator.
                if cancelTask { withUnsafeCurrentTask { $0?.cancel() } } else { break }
            }
            return tokens
        }.value
        #expect(taken >= 1)
        // `tokenCount` waits for the generation thread to let go. However slow the consumer, the thread ran at most
        // the buffer's `eventsAhead` events (and the one it was waiting to hand over) past what the consumer took.
        #expect(loop.tokenCount <= 3 + taken + GenerationLoop.eventsAhead + 1)
        #expect(engine.evaluations.count <= 1 + taken + GenerationLoop.eventsAhead + 1)
    }

    @Test("the stream delivers the same events as the loop, and errors as thrown errors")
    func streamEvents() async throws {
        let engine = ScriptedEvaluator(script: ScriptedEvaluator.bytes("done") + [ScriptedEvaluator.eog])
        let loop = GenerationLoop(evaluator: engine)
        var text = ""
        var reason: StopReason?
        for try await event in loop.generate(
            .text("?", parseSpecial: false), parameters: greedy(20), threadName: "test")
        {
            switch event {
            case .token(_, let piece): text += piece
            case .finished(let r, _): reason = r
            }
        }
        #expect(text == "done" && reason == .endOfGeneration)
        let tooLong = loop.generate(
            .tokens(Array(repeating: 65, count: 100)), parameters: greedy(1), threadName: "test")
        await #expect(throws: SanadError.self) {
            for try await _ in tooLong {}
        }
    }
}
