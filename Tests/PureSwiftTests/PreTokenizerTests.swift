import Foundation
import GGUF
import SanadTestSupport
import SanadTokenizers
import Testing

// The byte-level BPE pre-tokenizers of the families the engine runs (qwen2 for Qwen2/Qwen3, llama-bpe for Llama 3)
// against the reference llama.cpp build's `llama-tokenize`, run live: SmolLM2's vocabulary and merges relabelled
// with each pre-tokenizer name (what the synthetic models of issue 39 carry), over the golden texts, the corner
// cases and texts aimed at each scanner's rules. Phi-3 and Gemma use SentencePiece (`tokenizer.ggml.model` llama):
// TokenizerTests covers it on Gemma 3's vocabulary, `add_space_prefix` included.

/// SmolLM2's vocabulary under another `tokenizer.ggml.pre`, written once per name (metadata only: llama-tokenize
/// loads the vocabulary alone), without `tokenizer.ggml.add_bos_token` so that each name's default shows.
enum RelabelledVocabulary {
    static let files: [String: URL] = {
        guard let source = TestPaths.model(TestPaths.smolLM2), let file = try? GGUFFile(path: source.path) else {
            return [:]
        }
        var out: [String: URL] = [:]
        for pre in ["qwen2", "llama-bpe"] {
            var w = GGUFWriter()
            for key in file.metadataKeys {
                guard let value = file.metadata[key], key != "tokenizer.ggml.add_bos_token" else { continue }
                w.metadata.append((key, key == "tokenizer.ggml.pre" ? .string(pre) : value))
            }
            out[pre] = try? w.write(to: TestPaths.temporaryDirectory().appendingPathComponent("vocab-\(pre).gguf"))
        }
        return out
    }()

    /// Texts aimed at the Llama 3 and Qwen2 scanners' rules: contractions in any case, runs of digits longer than
    /// three, CR/LF runs after punctuation and spaces, trailing spaces, Unicode spaces and letters.
    static let texts: [String] = [
        "HE'S here, DON'T go; I'LL see we'Re THEY'VE it'D you'M 'x ''s",
        "1234567 12 1 0000 3.14159 ٣٤٥٦ 12a34",
        "a\r\n\r\n  b\n \n\tc  \t d   ",
        "  !!!\n\nx ...\r\n\r\ny ?!\n",
        "hello   world\u{3000}\u{3000}again\u{A0}\u{85}next",
        "naïve café — «quotes» ‘single’ `code` $100 #tag @user",
        "\n\n\nline\n\n",
        "x",
        " ",
        "مرحبا بالعالم 123 ١٢٣٤",
    ]

    static var cases: [String] {
        TokenizerFixtures.smolLM2Cases.map(\.text) + TokenizerCornerCaseTests.smolLM2Cases.map(\.text) + texts
    }

    static var available: Bool { LlamaTools.reference != nil && files.count == 2 }
}

@Suite(
    "Pre-tokenizers qwen2 and llama-bpe against llama-tokenize",
    .enabled(
        if: RelabelledVocabulary.available,
        "needs the reference llama.cpp build (scripts/install-llama) and models/SmolLM2"))
struct PreTokenizerTests {
    @Test("qwen2: every text tokenizes as llama-tokenize does", arguments: RelabelledVocabulary.cases)
    func qwen2(_ text: String) throws { try check(text, pre: "qwen2") }

    @Test("llama-bpe: every text tokenizes as llama-tokenize does", arguments: RelabelledVocabulary.cases)
    func llamaBPE(_ text: String) throws { try check(text, pre: "llama-bpe") }

    @Test("llama-bpe adds BOS by default; qwen2 does not")
    func beginningOfSequence() throws {
        for pre in ["qwen2", "llama-bpe"] {
            let url = try #require(RelabelledVocabulary.files[pre])
            let tokenizer = try Tokenizer.load(from: GGUFFile(path: url.path))
            let reference = try #require(LlamaTools.reference)
            let expected = try reference.tokenize(model: url, text: "Hi there", special: true)
            #expect(tokenizer.encode("Hi there", addSpecial: true, parseSpecial: true) == expected, "\(pre)")
        }
    }

    func check(_ text: String, pre: String) throws {
        let url = try #require(RelabelledVocabulary.files[pre])
        let tokenizer = try Tokenizer.load(from: GGUFFile(path: url.path))
        let reference = try #require(LlamaTools.reference)
        expectSameTokens(
            tokenizer.encode(text, addSpecial: false, parseSpecial: false),
            try reference.tokenize(model: url, text: text, special: false), text: text, mode: " (\(pre))")
        expectSameTokens(
            tokenizer.encode(text, addSpecial: true, parseSpecial: true),
            try reference.tokenize(model: url, text: text, special: true), text: text,
            mode: " (\(pre), with addSpecial and parseSpecial)")
    }
}
