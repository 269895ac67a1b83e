import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import SanadTokenizers
import Testing

// The pure-Swift tokenizers against llama.cpp b11434.
//
// Golden files: Tests/Fixtures/llama-b11434/tokenize.json (SmolLM2) and tokenize-gemma3.json (Gemma 3), made with
// `llama-tokenize --ids --no-bos --no-parse-special` (see the fixture README); each case must match exactly.
// The inline cases below were made with llama.cpp b11434's `llama_tokenize(vocab, text, len, …, add_special: false,
// parse_special: false)` through libllama (vocab-only load), for the corners the golden corpus may not reach.

/// One text and the ids llama.cpp gives it.
struct TokenizationCase: CustomTestStringConvertible, Sendable {
    /// The case's name in the golden file, if it has one.
    var name: String? = nil
    let text: String
    /// `add_special: false, parse_special: false`
    let ids: [Int32]
    /// `add_special: true, parse_special: true` (llama-tokenize's defaults), when the golden file has them.
    var idsWithSpecial: [Int32]? = nil

    init(name: String? = nil, text: String, ids: [Int32], idsWithSpecial: [Int32]? = nil) {
        self.name = name
        self.text = text
        self.ids = ids
        self.idsWithSpecial = idsWithSpecial
    }

    /// The name, or the text escaped and cut to a readable length.
    var testDescription: String {
        if let name { return name }
        let escaped = text.unicodeScalars.map { s -> String in
            switch s {
            case "\n": return "\\n"
            case "\t": return "\\t"
            case "\r": return "\\r"
            default: return s.value < 0x20 ? String(format: "\\u{%X}", s.value) : String(s)
            }
        }.joined()
        return escaped.count > 60 ? String(escaped.prefix(57)) + "…" : escaped
    }
}

/// Models and golden corpora, loaded once.
enum TokenizerFixtures {
    static let smolLM2: Tokenizer? = load(TestPaths.smolLM2)
    static let gemma3: Tokenizer? = load(TestPaths.gemma3)
    static let smolLM2Cases = cases("llama-b11434/tokenize.json")
    static let gemma3Cases = cases("llama-b11434/tokenize-gemma3.json")

    static func load(_ name: String) -> Tokenizer? {
        guard let url = TestPaths.model(name) else { return nil }
        return try? Tokenizer.load(from: GGUFFile(path: url.path))
    }

    static func tokenizer(_ name: String) throws -> Tokenizer {
        try #require(name == TestPaths.smolLM2 ? smolLM2 : gemma3, "\(name) did not load")
    }

    /// The cases of a golden file: `{"cases": [{"name", "text", "ids", "ids_with_special"}]}` (scripts/make-golden),
    /// or a bare array of cases. Empty when the file is absent (`goldenCorporaArePresent` fails then).
    static func cases(_ fixture: String) -> [TokenizationCase] {
        guard let data = try? Data(contentsOf: TestPaths.fixture(fixture)),
            let json = try? JSONSerialization.jsonObject(with: data)
        else { return [] }
        let list = (json as? [[String: Any]]) ?? ((json as? [String: Any])?["cases"] as? [[String: Any]]) ?? []
        return list.compactMap { entry in
            guard let text = entry["text"] as? String, let ids = entry["ids"] as? [Int] else { return nil }
            return TokenizationCase(
                name: entry["name"] as? String, text: text, ids: ids.map(Int32.init),
                idsWithSpecial: (entry["ids_with_special"] as? [Int])?.map(Int32.init))
        }
    }

    static var smolLM2Present: Bool { TestPaths.model(TestPaths.smolLM2) != nil }
    static var gemma3Present: Bool { TestPaths.model(TestPaths.gemma3) != nil }
}

/// Expects identical token arrays; on a difference names the text and the first position that differs.
func expectSameTokens(
    _ actual: [Int32], _ expected: [Int32], text: String, mode: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    let first =
        zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    let got = actual.dropFirst(first).prefix(8).map(String.init).joined(separator: " ")
    let want = expected.dropFirst(first).prefix(8).map(String.init).joined(separator: " ")
    Issue.record(
        """
        text \(text.debugDescription)\(mode): \(actual.count) tokens, expected \(expected.count); first difference at \
        position \(first): got [\(got) …], expected [\(want) …]
        """, sourceLocation: sourceLocation)
}

@Suite("Tokenizer: golden corpora of llama.cpp b11434")
struct TokenizerGoldenTests {
    @Test(.enabled(if: TokenizerFixtures.smolLM2Present || TokenizerFixtures.gemma3Present))
    func goldenCorporaArePresent() {
        if TokenizerFixtures.smolLM2Present {
            #expect(!TokenizerFixtures.smolLM2Cases.isEmpty, "Tests/Fixtures/llama-b11434/tokenize.json is missing")
        }
        if TokenizerFixtures.gemma3Present {
            #expect(
                !TokenizerFixtures.gemma3Cases.isEmpty, "Tests/Fixtures/llama-b11434/tokenize-gemma3.json is missing")
        }
    }

    @Test(.enabled(if: TokenizerFixtures.smolLM2Present), arguments: TokenizerFixtures.smolLM2Cases)
    func smolLM2(_ golden: TokenizationCase) throws {
        try Self.check(golden, TokenizerFixtures.tokenizer(TestPaths.smolLM2))
    }

    @Test(.enabled(if: TokenizerFixtures.gemma3Present), arguments: TokenizerFixtures.gemma3Cases)
    func gemma3(_ golden: TokenizationCase) throws {
        try Self.check(golden, TokenizerFixtures.tokenizer(TestPaths.gemma3))
    }

    static func check(_ golden: TokenizationCase, _ tokenizer: Tokenizer) {
        let ids = tokenizer.encode(golden.text, addSpecial: false, parseSpecial: false)
        expectSameTokens(ids, golden.ids, text: golden.text)
        if let withSpecial = golden.idsWithSpecial {
            let ids = tokenizer.encode(golden.text, addSpecial: true, parseSpecial: true)
            expectSameTokens(ids, withSpecial, text: golden.text, mode: " with addSpecial and parseSpecial")
        }
    }

    /// Byte-level BPE is lossless; SentencePiece with byte fallback is too, but for a literal ▁ (its escaped space),
    /// which comes back as a space, as in llama.cpp.
    @Test(.enabled(if: TokenizerFixtures.smolLM2Present), arguments: TokenizerFixtures.smolLM2Cases)
    func smolLM2RoundTrip(_ golden: TokenizationCase) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.smolLM2)
        let ids = tokenizer.encode(golden.text, addSpecial: false, parseSpecial: false)
        #expect(tokenizer.decode(ids, renderSpecial: false) == golden.text)
    }

    @Test(.enabled(if: TokenizerFixtures.gemma3Present), arguments: TokenizerFixtures.gemma3Cases)
    func gemma3RoundTrip(_ golden: TokenizationCase) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.gemma3)
        let ids = tokenizer.encode(golden.text, addSpecial: false, parseSpecial: false)
        #expect(tokenizer.decode(ids, renderSpecial: false) == spaceUnescaped(golden.text))
    }
}

/// SentencePiece's view of a text after a round trip: ▁ (U+2581) reads back as a space.
func spaceUnescaped(_ text: String) -> String {
    String(text.unicodeScalars.map { $0 == "\u{2581}" ? " " : Character($0) })
}

@Suite("Tokenizer: corner cases checked against llama.cpp b11434")
struct TokenizerCornerCaseTests {
    static let smolLM2Cases: [TokenizationCase] = [
        .init(
            text: "I'm here, you're there; they'll go", ids: [57, 5248, 1535, 28, 346, 2316, 665, 43, 502, 3060, 685]),
        // smollm splits every digit
        .init(text: "12345 and 3.14", ids: [33, 34, 35, 36, 37, 284, 216, 35, 30, 33, 36]),
        .init(text: "   leading and  double  spaces", ids: [256, 2899, 284, 216, 5561, 216, 5600]),
        .init(text: "tabs\tand\r\nCRLF\n\n\n", ids: [100, 7366, 197, 397, 201, 198, 9088, 60, 54, 16506]),
        .init(text: "مرحبا بالعالم", ids: [21706, 20602, 44626, 31462, 10805, 45726, 22208, 34966, 22208, 21706]),
        .init(
            text: "👨‍👩‍👧‍👦 family",
            ids: [
                10813, 235, 118, 321, 231, 10813, 235, 119, 321, 231, 10813, 235, 117, 321, 231, 10813, 235, 116, 1564,
            ]),
        // U+11380 (a letter) and U+10D40…41 (digits) are Unicode 16: unassigned for llama.cpp's Unicode 15.1 table
        .init(
            text: "abc\u{11380}def x\u{10D40}\u{10D41}y",
            ids: [25276, 187, 235, 232, 218, 1604, 1792, 187, 234, 130, 218, 187, 234, 130, 219, 105]),
        .init(text: "e\u{301} vs \u{E9}", ids: [85, 151, 219, 6375, 26411]),
        .init(text: "\u{A0}nbsp\u{3000}ideographic", ids: [15442, 94, 32093, 12109, 218, 489, 4551]),
        .init(text: "<|im_start|>user", ids: [44, 108, 306, 79, 3738, 108, 46, 4093]),
        .init(text: "\u{FF}\u{0}\u{1} control bytes", ids: [142, 140, 190, 191, 1533, 15590]),
        .init(text: "Ġhello ▁world", ids: [143, 250, 28120, 29566, 219, 6693]),
    ]

    static let gemma3Cases: [TokenizationCase] = [
        .init(
            text: "I'm here, you're there; they'll go",
            ids: [236777, 236789, 236757, 1590, 236764, 611, 236789, 500, 993, 236793, 901, 236789, 859, 817]),
        .init(
            text: "12345 and 3.14",
            ids: [236770, 236778, 236800, 236812, 236810, 532, 236743, 236800, 236761, 236770, 236812]),
        // runs of spaces and newlines are user-defined tokens, split out before merging
        .init(text: "   leading and  double  spaces", ids: [139, 26016, 532, 138, 7902, 138, 35220]),
        .init(text: "tabs\tand\r\nCRLF\n\n\n", ids: [39218, 255968, 624, 251, 107, 6459, 43102, 109]),
        .init(text: "مرحبا بالعالم", ids: [236873, 150345, 107602, 17193]),
        .init(text: "👨‍👩‍👧‍👦 family", ids: [243874, 237243, 243767, 237243, 244814, 237243, 244990, 2523]),
        // byte fallback for characters outside the vocabulary
        .init(
            text: "abc\u{11380}def x\u{10D40}\u{10D41}y",
            ids: [28180, 478, 383, 380, 366, 2063, 1123, 478, 382, 419, 366, 478, 382, 419, 367, 236762]),
        .init(text: "e\u{301} vs \u{E9}", ids: [236744, 238288, 7728, 1559]),
        .init(text: "<b>bold</b>\n\n  x", ids: [200, 15640, 209, 108, 138, 236781]),
        .init(text: "\u{FF}\u{0}\u{1} control bytes", ids: [243493, 238, 249732, 2256, 17234]),
        .init(text: "Ġhello ▁world", ids: [245237, 23391, 236743, 1902]),
    ]

    @Test(.enabled(if: TokenizerFixtures.smolLM2Present), arguments: smolLM2Cases)
    func smolLM2(_ golden: TokenizationCase) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.smolLM2)
        expectSameTokens(
            tokenizer.encode(golden.text, addSpecial: false, parseSpecial: false), golden.ids, text: golden.text)
        #expect(tokenizer.decode(golden.ids, renderSpecial: false) == golden.text)
    }

    @Test(.enabled(if: TokenizerFixtures.gemma3Present), arguments: gemma3Cases)
    func gemma3(_ golden: TokenizationCase) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.gemma3)
        expectSameTokens(
            tokenizer.encode(golden.text, addSpecial: false, parseSpecial: false), golden.ids, text: golden.text)
        #expect(tokenizer.decode(golden.ids, renderSpecial: false) == spaceUnescaped(golden.text))
    }
}

@Suite("Tokenizer: special tokens")
struct TokenizerSpecialTokenTests {
    @Test(.enabled(if: TokenizerFixtures.smolLM2Present))
    func smolLM2ParseSpecial() throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.smolLM2)
        let text = "<|im_start|>user\nHello<|im_end|>"
        let imStart = try #require(tokenizer.tokenID(of: "<|im_start|>"))
        let imEnd = try #require(tokenizer.tokenID(of: "<|im_end|>"))
        #expect(imStart == 1 && imEnd == 2)
        #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: true) == [imStart, 4093, 198, 19556, imEnd])
        // Control tokens are plain text without parseSpecial.
        let plain = tokenizer.encode(text, addSpecial: false, parseSpecial: false)
        expectSameTokens(
            plain, [44, 108, 306, 79, 3738, 108, 46, 4093, 198, 19556, 44, 108, 306, 79, 486, 108, 46], text: text)
        #expect(!plain.contains(imStart))
        // SmolLM2 adds no BOS.
        #expect(!tokenizer.addsBOS)
        #expect(tokenizer.encode(text, addSpecial: true, parseSpecial: true) == [imStart, 4093, 198, 19556, imEnd])
        #expect(tokenizer.decode([imStart, 4093], renderSpecial: true) == "<|im_start|>user")
        #expect(tokenizer.decode([imStart, 4093], renderSpecial: false) == "user")
    }

    @Test(.enabled(if: TokenizerFixtures.gemma3Present))
    func gemma3ParseSpecial() throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.gemma3)
        let text = "<start_of_turn>user\nHello<end_of_turn>"
        #expect(tokenizer.addsBOS && tokenizer.bos == 2)
        #expect(tokenizer.encode(text, addSpecial: true, parseSpecial: true) == [2, 105, 2364, 107, 9259, 106])
        #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: true) == [105, 2364, 107, 9259, 106])
        let plain = tokenizer.encode(text, addSpecial: false, parseSpecial: false)
        #expect(!plain.contains(105) && !plain.contains(106))
        #expect(plain.contains(107))  // "\n" is user-defined: split out even without parseSpecial
    }

    @Test(.enabled(if: TokenizerFixtures.smolLM2Present))
    func smolLM2EndOfGeneration() throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.smolLM2)
        // llama.cpp: <|endoftext|> (EOS-like, EOT), <|im_end|> (EOS), <reponame> (FIM repository)
        #expect(tokenizer.endOfGeneration == [0, 2, 4])
        #expect(tokenizer.eos == 2 && tokenizer.bos == 1)
        #expect(try tokenizer.isEndOfGeneration(#require(tokenizer.tokenID(of: "<|im_end|>"))))
        #expect(!tokenizer.isEndOfGeneration(1))
        #expect(tokenizer.vocabularySize == 49152)
    }

    @Test(.enabled(if: TokenizerFixtures.gemma3Present))
    func gemma3EndOfGeneration() throws {
        let tokenizer = try TokenizerFixtures.tokenizer(TestPaths.gemma3)
        // llama.cpp: <eos>, <end_of_turn>, </s>
        #expect(tokenizer.endOfGeneration == [1, 106, 212])
        #expect(tokenizer.eot == 106)
        #expect(tokenizer.vocabularySize == 262_144)
        #expect(tokenizer.kind == .sentencePiece)
    }
}

@Suite("Tokenizer: streaming decoder")
struct StreamingDecoderTests {
    static let texts = [
        "مرحبا بالعالم، كيف حالك اليوم؟",
        "Family: 👨‍👩‍👧‍👦, flag: 🏳️‍🌈, coder: 🧑🏽‍💻.",
        // outside Gemma's vocabulary: written as byte tokens
        "Rare: \u{11380}\u{10D40} 𓀀",
    ]

    @Test(
        .enabled(if: TokenizerFixtures.smolLM2Present && TokenizerFixtures.gemma3Present),
        arguments: [TestPaths.smolLM2, TestPaths.gemma3], texts)
    func chunksAreWholeCharacters(model: String, text: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(model)
        let ids = tokenizer.encode(text, addSpecial: false, parseSpecial: false)
        var decoder = UTF8StreamDecoder()
        var joined = ""
        for id in ids {
            let chunk = decoder.append(tokenizer.pieceBytes(id, renderSpecial: false))
            #expect(!chunk.unicodeScalars.contains("\u{FFFD}"), "broken character after token \(id)")
            joined += chunk
        }
        let rest = decoder.flush()
        #expect(rest.isEmpty)
        joined += rest
        #expect(joined == text)
    }

    /// The streaming test means something only if tokens do end inside characters.
    @Test(
        .enabled(if: TokenizerFixtures.smolLM2Present && TokenizerFixtures.gemma3Present),
        arguments: [TestPaths.smolLM2, TestPaths.gemma3])
    func someTokensEndInsideACharacter(model: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(model)
        let partial = Self.texts.flatMap { tokenizer.encode($0, addSpecial: false, parseSpecial: false) }.filter { id in
            let piece = tokenizer.pieceBytes(id, renderSpecial: false)
            return Array(String(decoding: piece, as: UTF8.self).utf8) != piece
        }
        #expect(!partial.isEmpty)
    }
}

/// Tiny vocabularies written with `GGUFWriter`.
enum SyntheticVocabularies {
    /// A byte-level BPE vocabulary: a, b, c, Ġ (space), ab, bc, abc, aa, Ġa, plus `<|end|>` as a control token.
    static let bpeTokens = ["a", "b", "c", "Ġ", "ab", "bc", "abc", "aa", "Ġa", "<|end|>"]

    static func writeBPE(merges: [String], model: String = "gpt2", pre: String? = "smollm", includeMerges: Bool = true)
        throws -> URL
    {
        var writer = GGUFWriter()
        writer.set("general.architecture", .string("llama"))
        writer.set("tokenizer.ggml.model", .string(model))
        if let pre { writer.set("tokenizer.ggml.pre", .string(pre)) }
        writer.set("tokenizer.ggml.tokens", .strings(bpeTokens))
        writer.set("tokenizer.ggml.token_type", .int32s(bpeTokens.map { $0 == "<|end|>" ? 3 : 1 }))
        if includeMerges { writer.set("tokenizer.ggml.merges", .strings(merges)) }
        writer.set("tokenizer.ggml.eos_token_id", .uint32(9))
        return try writer.write(to: TestPaths.temporaryDirectory().appendingPathComponent("bpe.gguf"))
    }

    /// A SentencePiece vocabulary with byte fallback: <unk> <s> </s>, the 256 byte tokens, then pieces with scores.
    static func writeSPM() throws -> URL {
        var tokens = ["<unk>", "<s>", "</s>"]
        var types: [Int32] = [2, 3, 3]
        var scores: [Float] = [0, 0, 0]
        for b in 0..<256 {
            tokens.append(String(format: "<0x%02X>", b))
            types.append(6)
            scores.append(0)
        }
        for (piece, score) in [("▁", -1.0), ("a", -2.0), ("b", -2.0), ("ab", -3.0), ("▁a", -1.5), ("▁ab", -5.0)]
            as [(String, Float)]
        {
            tokens.append(piece)
            types.append(1)
            scores.append(score)
        }
        var writer = GGUFWriter()
        writer.set("general.architecture", .string("llama"))
        writer.set("tokenizer.ggml.model", .string("llama"))
        writer.set("tokenizer.ggml.tokens", .strings(tokens))
        writer.set("tokenizer.ggml.token_type", .int32s(types))
        writer.set("tokenizer.ggml.scores", .float32s(scores))
        return try writer.write(to: TestPaths.temporaryDirectory().appendingPathComponent("spm.gguf"))
    }
}

@Suite("Tokenizer: synthetic vocabularies")
struct TokenizerSyntheticTests {
    // token ids: a 0, b 1, c 2, Ġ 3, ab 4, bc 5, abc 6, aa 7, Ġa 8, <|end|> 9

    @Test
    func mergeRanksDecideTheOrder() throws {
        let abFirst = try Tokenizer.load(
            from: GGUFFile(path: SyntheticVocabularies.writeBPE(merges: ["a b", "b c"]).path))
        #expect(abFirst.encode("abc", addSpecial: false, parseSpecial: false) == [4, 2])  // ab c
        let bcFirst = try Tokenizer.load(
            from: GGUFFile(path: SyntheticVocabularies.writeBPE(merges: ["b c", "a b"]).path))
        #expect(bcFirst.encode("abc", addSpecial: false, parseSpecial: false) == [0, 5])  // a bc
        let full = try Tokenizer.load(
            from: GGUFFile(path: SyntheticVocabularies.writeBPE(merges: ["b c", "a b", "a bc"]).path))
        #expect(full.encode("abc", addSpecial: false, parseSpecial: false) == [6])
        #expect(full.decode([6, 3, 0], renderSpecial: false) == "abc a")
    }

    @Test
    func equalRanksMergeLeftmostFirst() throws {
        let tokenizer = try Tokenizer.load(from: GGUFFile(path: SyntheticVocabularies.writeBPE(merges: ["a a"]).path))
        #expect(tokenizer.encode("aaa", addSpecial: false, parseSpecial: false) == [7, 0])
    }

    @Test
    func spacesAreMappedAndWordsSplit() throws {
        let tokenizer = try Tokenizer.load(
            from: GGUFFile(path: SyntheticVocabularies.writeBPE(merges: ["Ġ a", "a b"]).path))
        // "ab ab": words "ab" and " ab"; " a" merges first (rank 0) in the second word
        #expect(tokenizer.encode("ab ab", addSpecial: false, parseSpecial: false) == [4, 8, 1])
        // a byte with no token is dropped, as in llama.cpp
        #expect(tokenizer.encode("a!", addSpecial: false, parseSpecial: false) == [0])
        #expect(tokenizer.encode("<|end|>", addSpecial: false, parseSpecial: true) == [9])
        #expect(tokenizer.isEndOfGeneration(9))
        #expect(tokenizer.pieceBytes(3, renderSpecial: false) == [0x20])
    }

    @Test
    func unknownPreTokenizerIsAClearError() throws {
        let url = try SyntheticVocabularies.writeBPE(merges: ["a b"], pre: "no-such-pre")
        let file = try GGUFFile(path: url.path)
        let error = #expect(throws: TokenizerError.self) { try Tokenizer.load(from: file) }
        guard case .unsupportedPreTokenizer(_, let pre, let supported) = error else {
            Issue.record("expected unsupportedPreTokenizer, got \(String(describing: error))")
            return
        }
        #expect(pre == "no-such-pre")
        #expect(supported.contains("smollm"))
        let message = error?.description ?? ""
        #expect(message.contains("no-such-pre") && message.contains("smollm") && message.contains(url.path))
    }

    @Test
    func unknownModelIsAClearError() throws {
        let url = try SyntheticVocabularies.writeBPE(merges: [], model: "bert")
        let error = #expect(throws: TokenizerError.self) { try Tokenizer.load(from: GGUFFile(path: url.path)) }
        #expect(error == .unsupportedModel(path: url.path, model: "bert", supported: ["gpt2", "llama"]))
    }

    @Test
    func missingMergesIsAClearError() throws {
        let url = try SyntheticVocabularies.writeBPE(merges: [], includeMerges: false)
        let error = #expect(throws: TokenizerError.self) { try Tokenizer.load(from: GGUFFile(path: url.path)) }
        #expect(error == .missingKey(path: url.path, key: "tokenizer.ggml.merges"))
    }

    @Test
    func sentencePieceMergesByScoreWithByteFallback() throws {
        let tokenizer = try Tokenizer.load(from: GGUFFile(path: SyntheticVocabularies.writeSPM().path))
        let byteBase: Int32 = 3
        let piece = { (text: String) in tokenizer.tokenID(of: text) }
        let space = try #require(piece("▁"))
        let a = try #require(piece("a"))
        let b = try #require(piece("b"))
        let spaceA = try #require(piece("▁a"))
        #expect(tokenizer.kind == .sentencePiece)
        #expect(tokenizer.addsBOS && tokenizer.bos == 1 && tokenizer.eos == 2 && tokenizer.unknown == 0)
        // add_space_prefix defaults to true: " ab" → "▁ab"; "▁a" (-1.5) beats "ab" (-3), then "▁ab" (-5) joins
        #expect(tokenizer.encode("ab", addSpecial: true, parseSpecial: false) == [1, try #require(piece("▁ab"))])
        // "ba": "▁" + "b" is no token, "ba" is none: "▁", "b", "a"
        #expect(tokenizer.encode("ba", addSpecial: false, parseSpecial: false) == [space, b, a])
        // "é" is not in the vocabulary: its UTF-8 bytes C3 A9 as byte tokens
        #expect(
            tokenizer.encode("aé", addSpecial: false, parseSpecial: false) == [
                spaceA, byteBase + 0xC3, byteBase + 0xA9,
            ])
        // decoding removes the prefix space again and turns byte tokens into bytes
        #expect(tokenizer.decode([spaceA, byteBase + 0xC3, byteBase + 0xA9], renderSpecial: false) == "aé")
        #expect(tokenizer.pieceBytes(byteBase + 0x41, renderSpecial: false) == [0x41])
        #expect(tokenizer.pieceBytes(1, renderSpecial: false).isEmpty)
        #expect(tokenizer.pieceBytes(1, renderSpecial: true) == Array("<s>".utf8))
    }
}
