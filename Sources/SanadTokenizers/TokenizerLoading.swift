import GGUF

/// Special token ids of a vocabulary (nil: none).
struct SpecialIDs {
    var bos: Int32?
    var eos: Int32?
    var eot: Int32?
    var eom: Int32?
    var unknown: Int32?
    var separator: Int32?
    var padding: Int32?
    var mask: Int32?
    var fimPrefix: Int32?
    var fimSuffix: Int32?
    var fimMiddle: Int32?
    var fimPad: Int32?
    var fimRepository: Int32?
    var fimSeparator: Int32?
}

/// Tokenizer switches llama.cpp derives from the kind and the `add_*` keys.
struct Flags {
    var addBOS: Bool
    var addEOS: Bool
    var addSpacePrefix: Bool
    var cleanSpaces: Bool
}

extension Tokenizer {
    /// Reads the vocabulary of a GGUF model and prepares it the way llama.cpp's `llama_vocab::impl::load` does
    /// (special ids with their defaults, end-of-generation tokens found by text, token attributes, piece cache).
    ///
    /// - Throws: `TokenizerError` when a tokenizer key is missing or malformed, or when `tokenizer.ggml.model` /
    ///   `tokenizer.ggml.pre` names a kind this engine does not implement (the error lists the supported ones).
    public static func load(from file: GGUFFile) throws -> Tokenizer {
        let path = file.path
        let modelKey = "tokenizer.ggml.model"
        guard let modelValue = file.metadata[modelKey] else {
            throw TokenizerError.missingKey(path: path, key: modelKey)
        }
        guard let model = modelValue.stringValue else {
            throw TokenizerError.wrongType(path: path, key: modelKey, expected: "a string")
        }
        let preTokenizer = file.metadata["tokenizer.ggml.pre"]?.stringValue

        let texts = try readTokenTexts(file)
        let n = texts.count
        let scores = try readScores(file, count: n)
        var attributes = try readAttributes(file, count: n)

        var vocabulary = ByteStringTable(expectedCount: n)
        for (id, text) in texts.enumerated() {
            let inserted = withTokenizerBytes(of: text) { vocabulary.insertIfAbsent($0, value: Int32(id)).inserted }
            guard inserted else {
                throw TokenizerError.inconsistent(
                    path: path, key: "tokenizer.ggml.tokens", what: "token \(id) repeats the text '\(text)'")
            }
        }

        // The kind, with llama.cpp's defaults for it.
        let kind: Kind
        let engine: Engine
        var special = SpecialIDs()
        var flags: Flags
        switch model {
        case "gpt2":
            guard let preTokenizer, let settings = bytePairPreTokenizers[preTokenizer] else {
                throw TokenizerError.unsupportedPreTokenizer(
                    path: path, preTokenizer: preTokenizer ?? "(missing; llama.cpp would use 'default')",
                    supported: supportedPreTokenizers)
            }
            let mergesKey = "tokenizer.ggml.merges"
            guard let mergesValue = file.metadata[mergesKey] else {
                throw TokenizerError.missingKey(path: path, key: mergesKey)
            }
            guard case .array(let elementType, let values) = mergesValue, elementType == .string else {
                throw TokenizerError.wrongType(path: path, key: mergesKey, expected: "an array of strings")
            }
            let merges = values.compactMap(\.stringValue)
            kind = .bytePairEncoding(preTokenizer: preTokenizer)
            engine = .bytePair(
                BytePairEncoding(
                    preTokenizer: settings.preTokenizer, ignoreMerges: settings.ignoreMerges, vocabulary: vocabulary,
                    tokenCount: n, merges: merges))
            special.bos = 11
            special.eos = 11
            flags = Flags(
                addBOS: settings.addBOS, addEOS: false, addSpacePrefix: false, cleanSpaces: settings.cleanSpaces)
        case "llama":
            kind = .sentencePiece
            engine = .sentencePiece(SentencePiece(vocabulary: vocabulary, scores: scores))
            special.bos = 1
            special.eos = 2
            special.unknown = 0
            flags = Flags(addBOS: true, addEOS: false, addSpacePrefix: true, cleanSpaces: false)
        default:
            throw TokenizerError.unsupportedModel(path: path, model: model, supported: supportedModels)
        }
        if let v = file.metadata["tokenizer.ggml.add_space_prefix"]?.boolValue { flags.addSpacePrefix = v }
        if let v = file.metadata["tokenizer.ggml.add_bos_token"]?.boolValue { flags.addBOS = v }
        if let v = file.metadata["tokenizer.ggml.add_eos_token"]?.boolValue { flags.addEOS = v }

        readSpecialIDs(file, count: n, into: &special)
        let endOfGeneration = deriveEndOfGeneration(
            texts: texts, vocabulary: vocabulary, special: &special, attributes: &attributes, file: file)

        return Tokenizer(
            kind: kind, engine: engine, vocabulary: vocabulary, tokenTexts: texts, attributes: attributes,
            special: special, flags: flags, endOfGeneration: endOfGeneration)
    }

    private static func readTokenTexts(_ file: GGUFFile) throws -> [String] {
        let key = "tokenizer.ggml.tokens"
        guard let value = file.metadata[key] else { throw TokenizerError.missingKey(path: file.path, key: key) }
        guard case .array(let elementType, let values) = value, elementType == .string || values.isEmpty else {
            throw TokenizerError.wrongType(path: file.path, key: key, expected: "an array of strings")
        }
        guard !values.isEmpty else {
            throw TokenizerError.inconsistent(path: file.path, key: key, what: "the vocabulary is empty")
        }
        var texts: [String] = []
        texts.reserveCapacity(values.count)
        for (id, value) in values.enumerated() {
            let text = value.stringValue ?? ""
            texts.append(text.isEmpty ? "[EMPTY_\(id)]" : text)  // as llama.cpp names empty tokens
        }
        return texts
    }

    private static func readScores(_ file: GGUFFile, count: Int) throws -> [Float] {
        let key = "tokenizer.ggml.scores"
        guard let value = file.metadata[key] else { return [Float](repeating: 0, count: count) }
        guard case .array(let elementType, let values) = value, elementType == .float32 || elementType == .int32
        else { throw TokenizerError.wrongType(path: file.path, key: key, expected: "an array of float32 or int32") }
        guard values.count >= count else {
            throw TokenizerError.inconsistent(
                path: file.path, key: key, what: "\(values.count) scores for \(count) tokens")
        }
        var scores: [Float] = []
        scores.reserveCapacity(count)
        for value in values.prefix(count) {
            switch value {
            case .float32(let f): scores.append(f)
            case .int32(let i): scores.append(Float(i))
            default: scores.append(0)
            }
        }
        return scores
    }

    private static func readAttributes(_ file: GGUFFile, count: Int) throws -> [TokenAttributes] {
        let key = "tokenizer.ggml.token_type"
        guard let value = file.metadata[key] else { return [TokenAttributes](repeating: .normal, count: count) }
        guard case .array(let elementType, let values) = value, elementType == .int32 else {
            throw TokenizerError.wrongType(path: file.path, key: key, expected: "an array of int32")
        }
        guard values.count >= count else {
            throw TokenizerError.inconsistent(
                path: file.path, key: key, what: "\(values.count) token types for \(count) tokens")
        }
        return values.prefix(count).map { TokenAttributes(tokenType: $0.intValue ?? 0) }
    }

    /// The special ids from their keys, over the kind's defaults; a default or key value out of range is dropped
    /// or ignored, as in llama.cpp.
    private static func readSpecialIDs(_ file: GGUFFile, count: Int, into special: inout SpecialIDs) {
        let keys: [(String, WritableKeyPath<SpecialIDs, Int32?>)] = [
            ("tokenizer.ggml.bos_token_id", \.bos), ("tokenizer.ggml.eos_token_id", \.eos),
            ("tokenizer.ggml.eot_token_id", \.eot), ("tokenizer.ggml.eom_token_id", \.eom),
            ("tokenizer.ggml.unknown_token_id", \.unknown), ("tokenizer.ggml.seperator_token_id", \.separator),
            ("tokenizer.ggml.padding_token_id", \.padding), ("tokenizer.ggml.mask_token_id", \.mask),
            ("tokenizer.ggml.fim_pre_token_id", \.fimPrefix), ("tokenizer.ggml.fim_suf_token_id", \.fimSuffix),
            ("tokenizer.ggml.fim_mid_token_id", \.fimMiddle), ("tokenizer.ggml.fim_pad_token_id", \.fimPad),
            ("tokenizer.ggml.fim_rep_token_id", \.fimRepository), ("tokenizer.ggml.fim_sep_token_id", \.fimSeparator),
            // deprecated spellings
            ("tokenizer.ggml.prefix_token_id", \.fimPrefix), ("tokenizer.ggml.suffix_token_id", \.fimSuffix),
            ("tokenizer.ggml.middle_token_id", \.fimMiddle),
        ]
        for (key, field) in keys {
            if let id = special[keyPath: field], id >= count { special[keyPath: field] = nil }
            if let value = file.metadata[key]?.intValue, value >= 0, value < count {
                special[keyPath: field] = Int32(value)
            }
        }
    }

    /// llama.cpp's text-based detection of end-of-turn, FIM and end-of-generation tokens, with the attribute
    /// changes it makes (such tokens become control tokens; control tokens named "unused" become unused).
    private static func deriveEndOfGeneration(
        texts: [String], vocabulary: ByteStringTable, special: inout SpecialIDs, attributes: inout [TokenAttributes],
        file: GGUFFile
    ) -> Set<Int32> {
        // Texts are compared as bytes, as llama.cpp does (Swift's `==` on strings is canonical equivalence).
        func ids(_ names: [String]) -> [Int32] {
            names.compactMap { name in withTokenizerBytes(of: name) { vocabulary.value($0) } }.sorted()
        }
        func id(_ text: String) -> Int? { ids([text]).first.map(Int.init) }
        // Candidates by text. llama.cpp walks a hash map and takes the first hit; we take the lowest id.
        let detections: [(WritableKeyPath<SpecialIDs, Int32?>, [String])] = [
            (
                \.eot,
                [
                    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                    "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>",
                ]
            ),
            (\.eom, ["<|eom_id|>"]),
            (
                \.fimPrefix,
                [
                    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                    "<|code_prefix|>", "<|prefix|>",
                ]
            ),
            (
                \.fimSuffix,
                [
                    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                    "<|code_suffix|>", "<|suffix|>",
                ]
            ),
            (
                \.fimMiddle,
                [
                    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                    "<|code_middle|>", "<|middle|>",
                ]
            ),
            (\.fimPad, ["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"]),
            (\.fimRepository, ["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"]),
            (\.fimSeparator, ["<|file_sep|>"]),
        ]
        for (field, names) in detections where special[keyPath: field] == nil {
            if let id = ids(names).first.map(Int.init) {
                special[keyPath: field] = Int32(id)
                attributes[id].insert(.control)
            }
        }

        for id in texts.indices where attributes[id].contains(.control) && containsBytes(texts[id], "unused") {
            attributes[id].insert(.unused)
        }

        var eog: Set<Int32> = []
        for id in [special.fimPad, special.fimRepository, special.fimSeparator].compactMap({ $0 }) { eog.insert(id) }
        let eogNames = [
            "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
            "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
            "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>",
            "[e~[",
        ]
        for id in ids(eogNames) {
            eog.insert(id)
            attributes[Int(id)].insert(.control)
        }
        // gpt-oss: these always render.
        for id in ids(["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"]) {
            attributes[Int(id)] = .userDefined
        }
        for id in [special.eos, special.eot, special.eom].compactMap({ $0 }) { eog.insert(id) }

        func firstEOG(_ names: [String]) -> Int32? { ids(names).first { eog.contains($0) } }
        // o200k_harmony / solar-open: "<|end|>" does not end generation when "<|return|>"/"<|call|>" do.
        let hasReturn = firstEOG(["<|return|>"]) != nil
        let hasCall = firstEOG(["<|call|>", "<|calls|>"]) != nil
        let hasFlush = firstEOG(["<|flush|>"]) != nil
        if let end = firstEOG(["<|end|>"]), (hasReturn && hasCall) || (hasCall && hasFlush) {
            eog.remove(end)
            attributes[Int(end)] = .userDefined
        }
        // Gemma 4 and PLaMo: "</s>" is a normal token.
        if firstEOG(["<|tool_response>", "<|plamo:eos|>"]) != nil, let s = firstEOG(["</s>"]) {
            eog.remove(s)
            attributes[Int(s)] = .normal
        }

        // Per-model strip attributes (they change how special tokens split text, not their pieces).
        let name = String(
            decoding: (file.metadata["general.name"]?.stringValue ?? "").utf8.map {
                (0x41...0x5A).contains($0) ? $0 + 32 : $0
            }, as: UTF8.self)  // ASCII tolower, as llama.cpp
        let pre = file.metadata["tokenizer.ggml.pre"]?.stringValue ?? ""
        let architecture = file.metadata["general.architecture"]?.stringValue ?? ""
        if ["jina-v2-de", "jina-v2-es", "jina-v2-code", "mmbert"].contains(where: { containsBytes(pre, $0) })
            || ["nomic-bert-moe", "jina-bert-v3"].contains(where: { containsBytes(architecture, $0) })
        {
            if let mask = id("<mask>") { attributes[mask].insert(.leftStrip) }
        } else if containsBytes(name, "phi-3") || containsBytes(name, "phi3") {
            let specialMask: TokenAttributes = [.control, .userDefined, .unknown]
            for i in texts.indices where !attributes[i].isDisjoint(with: specialMask) {
                attributes[i].insert(.rightStrip)
            }
            if let s = id("</s>") { attributes[s].insert(.rightStrip) }
            for text in ["<unk>", "<s>", "<|endoftext|>"] {
                if let t = id(text) { attributes[t].remove(.rightStrip) }
            }
        } else if containsBytes(name, "modern-bert") {
            if let mask = id("[MASK]") { attributes[mask].insert(.leftStrip) }
        }
        return eog
    }

    /// Appends `llama_token_to_piece(…, special: true)` of one token.
    static func appendPiece(text: String, attributes: TokenAttributes, engine: Engine, to out: inout [UInt8]) {
        let bytes = Array(text.utf8)
        if !attributes.isDisjoint(with: [.unknown, .control, .userDefined]) {
            out.append(contentsOf: bytes)
        } else if attributes.contains(.normal) {
            switch engine {
            case .sentencePiece:
                // ▁ (E2 96 81) → space
                var i = 0
                while i < bytes.count {
                    if i + 2 < bytes.count && bytes[i] == 0xE2 && bytes[i + 1] == 0x96 && bytes[i + 2] == 0x81 {
                        out.append(0x20)
                        i += 3
                    } else {
                        out.append(bytes[i])
                        i += 1
                    }
                }
            case .bytePair:
                let codepoints = bytes.withUnsafeBufferPointer { llamaCodepoints($0) }
                for c in codepoints {
                    if Int(c) < ByteLevelMapping.decoded.count, ByteLevelMapping.decoded[Int(c)] >= 0 {
                        out.append(UInt8(ByteLevelMapping.decoded[Int(c)]))
                    } else {
                        // llama.cpp's marker for a code point outside the byte alphabet.
                        var utf8: [UInt8] = []
                        appendUTF8(c, to: &utf8)
                        out.append(contentsOf: Array("[UNK_BYTE_0x".utf8))
                        let hex = Array("0123456789abcdef".utf8)
                        for b in utf8 { out.append(contentsOf: [hex[Int(b >> 4)], hex[Int(b & 15)]]) }
                        out.append(contentsOf: bytes)
                        out.append(0x5D)  // ]
                    }
                }
            }
        } else if attributes.contains(.byte) {
            // `<0xNN>`: llama.cpp reads the two characters after "<0x" with strtol.
            var value: UInt8 = 0
            for b in bytes.dropFirst(3).prefix(2) {
                guard let digit = hexDigit(b) else { break }
                value = value &* 16 &+ digit
            }
            out.append(value)
        }
    }

    /// Whether `needle`'s UTF-8 bytes occur in `haystack`'s (C's `strstr`).
    private static func containsBytes(_ haystack: String, _ needle: String) -> Bool {
        let h = Array(haystack.utf8)
        let n = Array(needle.utf8)
        guard n.count <= h.count else { return false }
        guard !n.isEmpty else { return true }
        for start in 0...(h.count - n.count) where h[start] == n[0] && Array(h[start..<start + n.count]) == n {
            return true
        }
        return false
    }

    private static func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }
}
