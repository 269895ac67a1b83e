import GGUF

/// A model's vocabulary and tokenizer, built from GGUF metadata (`tokenizer.ggml.model`, `.pre`, `.tokens`,
/// `.scores`, `.token_type`, `.merges`, the special token ids and the `add_*` flags), tokenizing and detokenizing
/// exactly as llama.cpp b11434 does (`llama_tokenize`, `llama_token_to_piece`, `llama_detokenize`).
///
/// Kinds: byte-level BPE (`gpt2`, with the pre-tokenizers listed in `supportedPreTokenizers`) and SentencePiece
/// (`llama`). See `Backends/PureSwift/Tokenizers/README.md` for adding one.
///
/// Immutable after `load`, so one instance may serve many threads.
public final class Tokenizer: Sendable {
    /// Which algorithm this vocabulary uses.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// Byte-level BPE with the named `tokenizer.ggml.pre` pre-tokenizer.
        case bytePairEncoding(preTokenizer: String)
        /// SentencePiece-style merges by score with byte fallback.
        case sentencePiece

        public var description: String {
            switch self {
            case .bytePairEncoding(let pre): return "BPE (pre-tokenizer '\(pre)')"
            case .sentencePiece: return "SPM"
            }
        }
    }

    /// The `tokenizer.ggml.model` values this engine reads.
    public static let supportedModels = ["gpt2", "llama"]

    /// What llama.cpp's `llama_vocab::impl::load` sets with a byte-level BPE `tokenizer.ggml.pre` value.
    struct BytePairSettings: Sendable {
        let preTokenizer: PreTokenizer
        /// `clean_spaces` (clean_up_tokenization_spaces when decoding).
        let cleanSpaces: Bool
        /// `ignore_merges`: a word that is a token as a whole is that token, merges or not (Llama 3).
        var ignoreMerges = false
        /// `add_bos` before the file's `tokenizer.ggml.add_bos_token` (Llama 3: true).
        var addBOS = false
    }

    /// The byte-level BPE `tokenizer.ggml.pre` values this engine reads, with what llama.cpp sets for each.
    /// Verified against llama.cpp: `smollm` (SmolLM2), `gpt-2`, `starcoder`, `qwen2` and `llama-bpe` (SmolLM2's
    /// vocabulary relabelled); the others share those regexes and flags in llama.cpp's `llama_vocab::impl::load`.
    static let bytePairPreTokenizers: [String: BytePairSettings] = {
        var table: [String: BytePairSettings] = [:]
        for (name, clean) in [
            ("smollm", false), ("command-r", false), ("starcoder", true), ("refact", true), ("codeshell", true),
            ("exaone", true), ("minerva-7b", true), ("mellum2", true),
        ] {
            table[name] = BytePairSettings(preTokenizer: .digitsThenGPT2, cleanSpaces: clean)
        }
        for (name, clean) in [
            ("gpt-2", true), ("phi-2", true), ("mpt", true), ("olmo", true), ("jais", true), ("trillion", false),
            ("granite-docling", false),
        ] {
            table[name] = BytePairSettings(preTokenizer: .gpt2, cleanSpaces: clean)
        }
        for name in ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"] {
            table[name] = BytePairSettings(preTokenizer: .llama3, cleanSpaces: true, ignoreMerges: true, addBOS: true)
        }
        for (name, clean) in [("qwen2", false), ("deepseek-r1-qwen", false), ("megrez", true)] {
            table[name] = BytePairSettings(preTokenizer: .qwen2, cleanSpaces: clean)
        }
        return table
    }()

    /// The supported `tokenizer.ggml.pre` values for byte-level BPE, sorted.
    public static var supportedPreTokenizers: [String] { bytePairPreTokenizers.keys.sorted() }

    /// The algorithm (and BPE pre-tokenizer) of this vocabulary.
    public let kind: Kind
    /// Number of tokens (`tokenizer.ggml.tokens`).
    public let vocabularySize: Int
    /// Beginning-of-sequence token, if the vocabulary has one.
    public let bos: Int32?
    /// End-of-sequence token, if the vocabulary has one.
    public let eos: Int32?
    /// End-of-turn token (`tokenizer.ggml.eot_token_id`, else found by text such as `<|im_end|>` or
    /// `<end_of_turn>`; among several candidates the lowest id).
    public let eot: Int32?
    /// End-of-message token (`tokenizer.ggml.eom_token_id` or `<|eom_id|>`).
    public let eom: Int32?
    /// The unknown token, if any.
    public let unknown: Int32?
    /// The padding token, if any.
    public let padding: Int32?
    /// Whether `encode(_:addSpecial: true, …)` starts with `bos` (`tokenizer.ggml.add_bos_token`, else the
    /// kind's default).
    public let addsBOS: Bool
    /// Whether `encode(_:addSpecial: true, …)` ends with `eos` (`tokenizer.ggml.add_eos_token`).
    public let addsEOS: Bool
    /// Whether a space is put before text that starts the input or follows a special token (SentencePiece;
    /// `tokenizer.ggml.add_space_prefix`), and removed again from the first piece by `decode`.
    public let addsSpacePrefix: Bool
    /// Tokens that end generation: EOS, EOT, EOM and the tokens llama.cpp recognizes by text (`<|im_end|>`,
    /// `<|endoftext|>`, `<end_of_turn>`, `</s>`, FIM pad/repo/separator, …).
    public let endOfGeneration: Set<Int32>

    let engine: Engine
    /// Token texts → ids.
    let vocabulary: ByteStringTable
    let tokenTexts: [String]
    let attributes: [TokenAttributes]
    /// `llama_token_to_piece(…, special: true)` of every token, back to back.
    let pieceStorage: [UInt8]
    let pieceOffsets: [Int32]
    /// Control, user-defined and unknown tokens, longest text first (ties by id): the order they are split out.
    let specialTokens: [Int32]
    let specialTrie: SpecialTokenTrie
    let cleansSpaces: Bool

    enum Engine: Sendable {
        case bytePair(BytePairEncoding)
        case sentencePiece(SentencePiece)
    }

    init(
        kind: Kind, engine: Engine, vocabulary: ByteStringTable, tokenTexts: [String], attributes: [TokenAttributes],
        special: SpecialIDs, flags: Flags, endOfGeneration: Set<Int32>
    ) {
        self.kind = kind
        self.engine = engine
        self.vocabulary = vocabulary
        self.tokenTexts = tokenTexts
        self.attributes = attributes
        self.vocabularySize = tokenTexts.count
        self.bos = special.bos
        self.eos = special.eos
        self.eot = special.eot
        self.eom = special.eom
        self.unknown = special.unknown
        self.padding = special.padding
        self.addsBOS = flags.addBOS
        self.addsEOS = flags.addEOS
        self.addsSpacePrefix = flags.addSpacePrefix
        self.cleansSpaces = flags.cleanSpaces
        self.endOfGeneration = endOfGeneration

        let specialMask: TokenAttributes = [.control, .userDefined, .unknown]
        let special = (0..<tokenTexts.count).filter { !attributes[$0].isDisjoint(with: specialMask) }
        let lengths = tokenTexts.map { $0.utf8.count }
        self.specialTokens = special.sorted { lengths[$0] != lengths[$1] ? lengths[$0] > lengths[$1] : $0 < $1 }
            .map { Int32($0) }
        self.specialTrie = SpecialTokenTrie(tokens: self.specialTokens, texts: tokenTexts)

        var storage: [UInt8] = []
        storage.reserveCapacity(tokenTexts.count * 6)
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(tokenTexts.count + 1)
        for id in 0..<tokenTexts.count {
            Self.appendPiece(
                text: tokenTexts[id], attributes: attributes[id], engine: engine, to: &storage)
            offsets.append(Int32(storage.count))
        }
        self.pieceStorage = storage
        self.pieceOffsets = offsets
    }

    // MARK: Encoding

    /// Tokenizes `text` exactly as `llama_tokenize(vocab, text, …, add_special, parse_special)`.
    ///
    /// - Parameters:
    ///   - addSpecial: add BOS/EOS where the vocabulary asks for them (`addsBOS`, `addsEOS`).
    ///   - parseSpecial: match control tokens such as `<|im_start|>` in the text. User-defined tokens (for
    ///     example Gemma's `\n` and runs of spaces) are matched either way, as in llama.cpp.
    public func encode(_ text: String, addSpecial: Bool, parseSpecial: Bool) -> [Int32] {
        withTokenizerBytes(of: text) { encode(bytes: $0, addSpecial: addSpecial, parseSpecial: parseSpecial) }
    }

    /// Tokenizes raw bytes (invalid UTF-8 is read as llama.cpp reads it).
    public func encode(bytes: UnsafeBufferPointer<UInt8>, addSpecial: Bool, parseSpecial: Bool) -> [Int32] {
        var output: [Int32] = []
        output.reserveCapacity(bytes.count / 3 + 2)
        let fragments = partition(bytes, parseSpecial: parseSpecial)
        if addSpecial && addsBOS, let bos { output.append(bos) }
        switch engine {
        case .bytePair(let bpe):
            var cache: [[UInt8]: [Int32]] = [:]
            for fragment in fragments {
                switch fragment {
                case .token(let id):
                    output.append(id)
                case .text(let start, let end):
                    bpe.encode(UnsafeBufferPointer(rebasing: bytes[start..<end]), into: &output, cache: &cache)
                }
            }
        case .sentencePiece(let spm):
            var previousIsSpecial = true
            var escaped: [UInt8] = []
            for fragment in fragments {
                switch fragment {
                case .token(let id):
                    output.append(id)
                    previousIsSpecial = true
                case .text(let start, let end):
                    escaped.removeAll(keepingCapacity: true)
                    if addsSpacePrefix && previousIsSpecial { escaped.append(contentsOf: [0xE2, 0x96, 0x81]) }
                    for b in bytes[start..<end] {
                        if b == 0x20 {
                            escaped.append(contentsOf: [0xE2, 0x96, 0x81])  // ▁
                        } else {
                            escaped.append(b)
                        }
                    }
                    escaped.withUnsafeBufferPointer { spm.encode($0, unknown: unknown, into: &output) }
                    previousIsSpecial = false
                }
            }
        }
        if addSpecial && addsEOS, let eos { output.append(eos) }
        return output
    }

    enum Fragment: Equatable {
        case text(Int, Int)  // byte range start..<end, never empty
        case token(Int32)
    }

    /// Splits special tokens out of the text, as llama.cpp's `tokenizer_st_partition`: for each special token,
    /// longest first, every raw-text fragment is cut at the token's occurrences, left to right.
    func partition(_ bytes: UnsafeBufferPointer<UInt8>, parseSpecial: Bool) -> [Fragment] {
        guard !bytes.isEmpty else { return [] }
        var fragments: [Fragment] = [.text(0, bytes.count)]
        let present = specialTrie.tokensOccurring(in: bytes)
        guard !present.isEmpty else { return fragments }
        for id in specialTokens where present.contains(id) {
            let attr = attributes[Int(id)]
            if !parseSpecial && !attr.isDisjoint(with: [.control, .unknown]) { continue }
            let needle = Array(tokenTexts[Int(id)].utf8)
            var next: [Fragment] = []
            next.reserveCapacity(fragments.count + 2)
            for fragment in fragments {
                guard case .text(var start, let end) = fragment else {
                    next.append(fragment)
                    continue
                }
                while true {
                    guard let match = Self.find(needle, in: bytes, from: start, to: end) else {
                        if start < end { next.append(.text(start, end)) }
                        break
                    }
                    var leftEnd = match
                    if attr.contains(.leftStrip) {
                        while leftEnd > start && Self.isCSpace(bytes[leftEnd - 1]) { leftEnd -= 1 }
                    }
                    if leftEnd > start { next.append(.text(start, leftEnd)) }
                    next.append(.token(id))
                    start = match + needle.count
                    if attr.contains(.rightStrip) {
                        while start < end && Self.isCSpace(bytes[start]) { start += 1 }
                    }
                    if start >= end { break }
                }
            }
            fragments = next
        }
        return fragments
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        let n = needle.count
        guard n > 0, to - from >= n else { return nil }
        let first = needle[0]
        var i = from
        while i <= to - n {
            if bytes[i] == first {
                var k = 1
                while k < n && bytes[i + k] == needle[k] { k += 1 }
                if k == n { return i }
            }
            i += 1
        }
        return nil
    }

    /// C's `isspace` in the "C" locale.
    private static func isCSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    // MARK: Decoding

    /// The bytes of one token, as `llama_token_to_piece(vocab, token, …, lstrip: 0, special: renderSpecial)`:
    /// byte-level BPE text mapped back to raw bytes, SentencePiece ▁ turned into spaces, `<0xNN>` into the byte.
    /// Control and unknown tokens are empty unless `renderSpecial`; user-defined tokens always render. An id out
    /// of range gives no bytes.
    public func pieceBytes(_ token: Int32, renderSpecial: Bool) -> [UInt8] {
        guard token >= 0, Int(token) < vocabularySize else { return [] }
        if !renderSpecial && !attributes[Int(token)].isDisjoint(with: [.control, .unknown]) { return [] }
        return Array(pieceStorage[Int(pieceOffsets[Int(token)])..<Int(pieceOffsets[Int(token) + 1])])
    }

    /// The text of a token sequence, as `llama_detokenize(…, remove_special: false, unparse_special:
    /// renderSpecial)`: the leading space that `addsSpacePrefix` put in is removed from the first piece, and
    /// vocabularies with llama.cpp's `clean_spaces` get its clean-up. Invalid UTF-8 (a sequence cut in the middle
    /// of a character) becomes U+FFFD.
    public func decode(_ tokens: [Int32], renderSpecial: Bool) -> String {
        String(decoding: decodeBytes(tokens, renderSpecial: renderSpecial), as: UTF8.self)
    }

    /// The bytes of `decode`.
    public func decodeBytes(_ tokens: [Int32], renderSpecial: Bool) -> [UInt8] {
        var text: [UInt8] = []
        var removeSpace = addsSpacePrefix
        for token in tokens {
            let piece = pieceBytes(token, renderSpecial: renderSpecial)
            if removeSpace, piece.first == 0x20 {
                text.append(contentsOf: piece.dropFirst())
            } else {
                text.append(contentsOf: piece)
            }
            removeSpace = false
        }
        return cleansSpaces ? Self.cleanSpaces(text) : text
    }

    /// llama.cpp's `clean_spaces` passes: drop the space before `?!.,`, around a lone `'`, and before `'s`, `'m`,
    /// `'re`, `'ve`.
    static func cleanSpaces(_ input: [UInt8]) -> [UInt8] {
        let space: UInt8 = 0x20
        let quote: UInt8 = 0x27
        var text = input
        // Pass 1: " ?", " !", " .", " ," lose the space.
        var count = compactingPass(&text, count: text.count) { text, i, _ in
            text[i - 1] == space && [0x3F, 0x21, 0x2E, 0x2C].contains(text[i])
        }
        // Pass 2: " ' " loses both spaces (the one after is zeroed and its slot skipped, as llama.cpp does).
        count = compactingPass(&text, count: count) { text, i, count in
            guard text[i] == quote && i + 1 < count && text[i - 1] == space && text[i + 1] == space else {
                return false
            }
            i += 1
            text[i] = 0
            return true
        }
        // Pass 3: " 's", " 'm", " 're", " 've" lose the space.
        count = compactingPass(&text, count: count) { text, i, count in
            guard text[i - 1] == space && text[i] == quote && i + 1 < count else { return false }
            let x1 = text[i + 1]
            if x1 == 0x73 || x1 == 0x6D { return true }
            return i + 2 < count && (x1 == 0x72 || x1 == 0x76) && text[i + 2] == 0x65
        }
        return Array(text[..<count])
    }

    /// One of llama.cpp's in-place `clean_spaces` passes over `text[..<count]`: for each `i ≥ 1` the byte read at
    /// `i` (before `dropsPrevious` runs) is written at `total ≤ i`; when `dropsPrevious(text, &i, count)` is true
    /// the byte written before it is dropped. Returns the new count.
    private static func compactingPass(
        _ text: inout [UInt8], count: Int, dropsPrevious: (inout [UInt8], inout Int, Int) -> Bool
    ) -> Int {
        var total = count > 0 ? 1 : 0
        var i = 1
        while i < count {
            let x = text[i]
            if dropsPrevious(&text, &i, count) { total -= 1 }
            text[total] = x
            total += 1
            i += 1
        }
        return total
    }

    // MARK: Lookup

    /// The id of the token whose text is exactly `text` (for example `"<|im_end|>"`), if any.
    public func tokenID(of text: String) -> Int32? {
        withTokenizerBytes(of: text) { vocabulary.value($0) }
    }

    /// The stored text of a token (byte-level BPE tokens in their mapped alphabet, SentencePiece with ▁), or nil
    /// for an id out of range.
    public func tokenText(_ token: Int32) -> String? {
        guard token >= 0, Int(token) < vocabularySize else { return nil }
        return tokenTexts[Int(token)]
    }

    /// Whether generating `token` ends the turn (`token ∈ endOfGeneration`).
    public func isEndOfGeneration(_ token: Int32) -> Bool { endOfGeneration.contains(token) }

    /// Whether `token` is a control token (rendered only with `renderSpecial`, matched only with `parseSpecial`).
    public func isControl(_ token: Int32) -> Bool {
        token >= 0 && Int(token) < vocabularySize && attributes[Int(token)].contains(.control)
    }
}

/// llama.cpp's `llama_token_attr` bits.
struct TokenAttributes: OptionSet, Sendable {
    let rawValue: UInt16
    static let unknown = TokenAttributes(rawValue: 1 << 0)
    static let unused = TokenAttributes(rawValue: 1 << 1)
    static let normal = TokenAttributes(rawValue: 1 << 2)
    static let control = TokenAttributes(rawValue: 1 << 3)
    static let userDefined = TokenAttributes(rawValue: 1 << 4)
    static let byte = TokenAttributes(rawValue: 1 << 5)
    static let leftStrip = TokenAttributes(rawValue: 1 << 7)
    static let rightStrip = TokenAttributes(rawValue: 1 << 8)

    /// From a `tokenizer.ggml.token_type` value (llama.cpp's `llama_token_type`).
    init(tokenType: Int) {
        switch tokenType {
        case 1: self = .normal
        case 2: self = .unknown
        case 3: self = .control
        case 4: self = .userDefined
        case 5: self = .unused
        case 6: self = .byte
        default: self = []  // undefined
        }
    }

    init(rawValue: UInt16) { self.rawValue = rawValue }
}

/// All special token texts in a byte trie, to find in one pass which of them occur in a text at all (the others
/// cannot split it, so the partition skips them).
struct SpecialTokenTrie: Sendable {
    /// `node << 8 | byte` → child node; the root is node 0.
    private let edges: [Int: Int32]
    /// The token ending at each node, or -1.
    private let terminal: [Int32]

    init(tokens: [Int32], texts: [String]) {
        var edges: [Int: Int32] = [:]
        var terminal: [Int32] = [-1]
        for id in tokens {
            var node = 0
            for b in texts[Int(id)].utf8 {
                let key = node << 8 | Int(b)
                if let child = edges[key] {
                    node = Int(child)
                } else {
                    let child = terminal.count
                    terminal.append(-1)
                    edges[key] = Int32(child)
                    node = child
                }
            }
            if node != 0 && terminal[node] < 0 { terminal[node] = id }
        }
        self.edges = edges
        self.terminal = terminal
    }

    /// The special tokens found anywhere in `bytes`.
    func tokensOccurring(in bytes: UnsafeBufferPointer<UInt8>) -> Set<Int32> {
        var found: Set<Int32> = []
        guard !edges.isEmpty else { return found }
        for start in 0..<bytes.count {
            var node = 0
            var i = start
            while i < bytes.count, let child = edges[node << 8 | Int(bytes[i])] {
                node = Int(child)
                if terminal[node] >= 0 { found.insert(terminal[node]) }
                i += 1
            }
        }
        return found
    }
}
