/// The checks every engine runs on a model file before loading it, and `sanad models` before listing it.
///
/// `GGUFFile` already guarantees that the file is well-formed (every count, length and offset fits the file). This
/// step asks whether what it says is *plausible* and *consistent*: hyperparameters within the ranges real models
/// use, tensor shapes that agree with them, tokenizer arrays that agree with each other and with the embedding, and
/// tensor types that fit their data. Native engines (libllama) abort the process on many of these; the pure-Swift
/// engine would compute nonsense. Every error names the file and the key or tensor.
public enum ModelValidation {
    /// Integer hyperparameters (`<architecture>.<suffix>`) with the range a real model's value lies in. The
    /// ranges are wide (10× beyond the largest published models) and exist to keep products of them far from
    /// overflow: 2^12 layers × 2^27 positions × 2^12 heads × 2^16 head size stays below 2^67 bytes only with
    /// checked arithmetic, which the memory estimate uses; the ranges turn nonsense into a message instead.
    public static let integerRanges: [(suffix: String, range: ClosedRange<Int>)] = [
        ("block_count", 1...4096),
        ("context_length", 1...(1 << 27)),
        ("embedding_length", 1...(1 << 18)),
        ("feed_forward_length", 1...(1 << 20)),
        ("attention.head_count", 1...(1 << 12)),
        ("attention.head_count_kv", 1...(1 << 12)),
        ("attention.key_length", 1...(1 << 16)),
        ("attention.value_length", 1...(1 << 16)),
        ("rope.dimension_count", 0...(1 << 16)),
        ("vocab_size", 1...(1 << 24)),
        ("expert_count", 0...(1 << 16)),
        ("expert_used_count", 0...(1 << 16)),
    ]
    /// Keys that may hold one value per layer (an array of `block_count` values; 0 = the layer has none).
    static let perLayerSuffixes: Set<String> = [
        "feed_forward_length", "attention.head_count", "attention.head_count_kv",
    ]
    /// Float hyperparameters and the open/closed range a real model's value lies in.
    public static let floatRanges: [(suffix: String, range: ClosedRange<Double>, strictlyPositive: Bool)] = [
        ("attention.layer_norm_rms_epsilon", 0...1, true),
        ("attention.layer_norm_epsilon", 0...1, true),
        ("rope.freq_base", 0...1e12, true),
        ("rope.scaling.factor", 0...1e6, false),
        ("rope.scale_linear", 0...1e6, false),
        ("attention.scale", 0...1e6, false),
        ("attn_logit_softcapping", 0...1e6, false),
        ("final_logit_softcapping", 0...1e6, false),
    ]
    /// The alignment ggml needs for tensor data read in place (`TENSOR_ALIGNMENT`).
    public static let tensorDataAlignment = 32
    /// The most tokens a vocabulary may have.
    public static let maximumVocabularySize = 1 << 24
    /// Special-token keys whose value must be a token id of the vocabulary (or -1: none).
    public static let specialTokenKeys = [
        "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
        "tokenizer.ggml.separator_token_id", "tokenizer.ggml.padding_token_id", "tokenizer.ggml.eot_token_id",
        "tokenizer.ggml.eom_token_id", "tokenizer.ggml.mask_token_id",
    ]

    /// Every check: hyperparameters, tokenizer and tensors; run once per file object (a second call gives the
    /// first one's verdict).
    public static func validate(_ file: GGUFFile) throws {
        try file.validation.get {
            try validateHyperparameters(file)
            try validateTokenizer(file)
            try validateTensors(file)
        }
    }

    // MARK: Hyperparameters

    /// The integer and float hyperparameters of the file's architecture are in range and agree with each other.
    /// (What `ModelSummary` and the memory estimate rely on.)
    public static func validateHyperparameters(_ file: GGUFFile) throws {
        guard let value = file.metadata["general.architecture"] else { return }
        guard let arch = value.stringValue else {
            throw GGUFError.wrongKeyType(
                path: file.path, key: "general.architecture", expected: "a string", found: value.type.description)
        }
        for (suffix, range) in integerRanges {
            _ = try integer(file, "\(arch).\(suffix)", range: range, perLayer: perLayerSuffixes.contains(suffix))
        }
        for (suffix, range, strictlyPositive) in floatRanges {
            let key = "\(arch).\(suffix)"
            guard let value = file.metadata[key] else { continue }
            guard value.type == .float32 || value.type == .float64 || isInteger(value.type), let d = value.doubleValue
            else {
                throw GGUFError.wrongKeyType(path: file.path, key: key, expected: "a number", found: "\(value.type)")
            }
            guard d.isFinite, range.contains(d), !strictlyPositive || d > 0 else {
                let lower = strictlyPositive ? "greater than \(range.lowerBound)" : "at least \(range.lowerBound)"
                throw GGUFError.implausible(
                    path: file.path, key: key, value: "\(d)",
                    problem: "expected a finite number \(lower) and at most \(range.upperBound)")
            }
        }
        // Agreement between the scalar values (per-layer arrays are checked by the engines that read them).
        let layers = try integer(file, "\(arch).block_count", range: 1...4096, perLayer: false)
        let embedding = try integer(file, "\(arch).embedding_length", range: 1...(1 << 18), perLayer: false)
        let heads = try integer(file, "\(arch).attention.head_count", range: 1...(1 << 12), perLayer: true)
        let kvHeads = try integer(file, "\(arch).attention.head_count_kv", range: 1...(1 << 12), perLayer: true)
        for key in perLayerSuffixes.sorted() {
            guard let layers, case .array(_, let values) = file.metadata["\(arch).\(key)"] else { continue }
            guard values.count == layers else {
                throw GGUFError.inconsistent(
                    path: file.path,
                    what: "\(arch).\(key) holds \(values.count) per-layer values but \(arch).block_count is \(layers)")
            }
        }
        if let heads, let kvHeads, file.metadata["\(arch).attention.head_count"]?.intValue != nil,
            file.metadata["\(arch).attention.head_count_kv"]?.intValue != nil
        {
            guard kvHeads <= heads, heads % kvHeads == 0 else {
                throw GGUFError.implausible(
                    path: file.path, key: "\(arch).attention.head_count_kv", value: "\(kvHeads)",
                    problem: "expected a divisor of \(arch).attention.head_count \(heads)")
            }
        }
        if let embedding, let heads, file.metadata["\(arch).attention.head_count"]?.intValue != nil,
            file.metadata["\(arch).attention.key_length"] == nil
        {
            guard embedding % heads == 0 else {
                throw GGUFError.implausible(
                    path: file.path, key: "\(arch).attention.head_count", value: "\(heads)",
                    problem: "does not divide \(arch).embedding_length \(embedding) and no "
                        + "\(arch).attention.key_length says the head size")
            }
        }
    }

    /// The integer at `key` (nil when absent), refused with the range when outside it. With `perLayer`, an array
    /// of integers is accepted too (each in `0...range.upperBound`); its first value is returned.
    @discardableResult
    static func integer(_ file: GGUFFile, _ key: String, range: ClosedRange<Int>, perLayer: Bool) throws -> Int? {
        guard let value = file.metadata[key] else { return nil }
        if case .array(let type, let values) = value {
            guard perLayer else {
                throw GGUFError.wrongKeyType(path: file.path, key: key, expected: "an integer", found: "an array")
            }
            guard !values.isEmpty, isInteger(type) else {
                throw GGUFError.wrongKeyType(
                    path: file.path, key: key, expected: "an integer or a non-empty array of integers",
                    found: "an array of \(values.count) \(type) values")
            }
            var first: Int?
            for (layer, element) in values.enumerated() {
                guard let i = element.intValue, (0...range.upperBound).contains(i) else {
                    throw GGUFError.implausible(
                        path: file.path, key: "\(key)[\(layer)]", value: element.description,
                        problem: "at most \(range.upperBound) (0 = none in this layer)")
                }
                if first == nil && i > 0 { first = i }
            }
            return first
        }
        guard isInteger(value.type), let i = value.intValue else {
            if isInteger(value.type) {  // a uint64 beyond Int.max
                throw GGUFError.implausible(
                    path: file.path, key: key, value: value.description,
                    problem: "at most \(range.upperBound)")
            }
            throw GGUFError.wrongKeyType(path: file.path, key: key, expected: "an integer", found: "\(value.type)")
        }
        guard range.contains(i) else {
            throw GGUFError.implausible(
                path: file.path, key: key, value: "\(i)",
                problem: i < range.lowerBound
                    ? "at least \(range.lowerBound)"
                    : "at most \(range.upperBound) (about 10× the largest published model)")
        }
        return i
    }

    static func isInteger(_ type: GGUFValueType) -> Bool {
        switch type {
        case .uint8, .int8, .uint16, .int16, .uint32, .int32, .uint64, .int64: return true
        default: return false
        }
    }

    // MARK: Tokenizer

    /// Token, score and type arrays of equal length; special token ids that are integers inside the vocabulary;
    /// the vocabulary's size agreeing with `<arch>.vocab_size` and the embedding.
    public static func validateTokenizer(_ file: GGUFFile) throws {
        guard let tokensValue = file.metadata["tokenizer.ggml.tokens"] else {
            for key in specialTokenKeys where file.metadata[key] != nil {
                throw GGUFError.inconsistent(
                    path: file.path, what: "\(key) is set but the file has no tokenizer.ggml.tokens")
            }
            return
        }
        guard case .array(let tokenType, let tokens) = tokensValue, tokenType == .string || tokens.isEmpty else {
            throw GGUFError.wrongKeyType(
                path: file.path, key: "tokenizer.ggml.tokens", expected: "an array of strings",
                found: tokensValue.description)
        }
        let count = tokens.count
        guard (1...maximumVocabularySize).contains(count) else {
            throw GGUFError.implausible(
                path: file.path, key: "tokenizer.ggml.tokens", value: "(\(count) tokens)",
                problem: "expected 1 to \(maximumVocabularySize) tokens")
        }
        // libllama asserts (aborts) on a vocabulary with a repeated token; compared as the bytes the file holds.
        if case .strings(let bytes, let ends) = tokens.storage {
            var seen = Set<ArraySlice<UInt8>>(minimumCapacity: count)
            var start = 0
            for (id, end) in ends.enumerated() {
                guard seen.insert(bytes[start..<end]).inserted else {
                    throw GGUFError.inconsistent(
                        path: file.path,
                        what: "tokenizer.ggml.tokens repeats the token \(tokens[id].description) at id \(id)")
                }
                start = end
            }
        } else if Set(tokens.compactMap(\.stringValue)).count != count {
            throw GGUFError.inconsistent(path: file.path, what: "tokenizer.ggml.tokens repeats a token")
        }
        for (key, expected) in [("tokenizer.ggml.scores", "float32"), ("tokenizer.ggml.token_type", "int32")] {
            guard let value = file.metadata[key] else { continue }
            guard case .array(let type, let values) = value,
                expected == "float32" ? (type == .float32 || type == .float64) : isInteger(type)
            else {
                throw GGUFError.wrongKeyType(
                    path: file.path, key: key, expected: "an array of \(expected)", found: value.description)
            }
            guard values.count == count else {
                throw GGUFError.inconsistent(
                    path: file.path,
                    what: "\(key) has \(values.count) entries but tokenizer.ggml.tokens has \(count)")
            }
            if expected == "float32" {
                if let bad = values.firstIndex(where: { !($0.doubleValue?.isFinite ?? false) }) {
                    throw GGUFError.implausible(
                        path: file.path, key: "\(key)[\(bad)]", value: values[bad].description,
                        problem: "token scores are finite numbers")
                }
            } else if let bad = values.firstIndex(where: { !(0...6).contains($0.intValue ?? -1) }) {
                throw GGUFError.implausible(
                    path: file.path, key: "\(key)[\(bad)]", value: values[bad].description,
                    problem: "token types are 0…6 (normal, unknown, control, user-defined, unused, byte)")
            }
        }
        if let merges = file.metadata["tokenizer.ggml.merges"] {
            guard case .array(let type, let values) = merges, type == .string || values.isEmpty else {
                throw GGUFError.wrongKeyType(
                    path: file.path, key: "tokenizer.ggml.merges", expected: "an array of strings",
                    found: merges.description)
            }
        }
        for key in specialTokenKeys {
            guard let value = file.metadata[key] else { continue }
            guard isInteger(value.type) else {
                throw GGUFError.wrongKeyType(
                    path: file.path, key: key, expected: "a token id (integer)", found: value.description)
            }
            // -1 (or its uint32 form) is llama.cpp's "no such token".
            if value == .int32(-1) || value == .int64(-1) || value == .uint32(.max) { continue }
            guard let id = value.intValue, (0..<count).contains(id) else {
                throw GGUFError.implausible(
                    path: file.path, key: key, value: value.description,
                    problem: "expected a token id in 0..<\(count) (the size of tokenizer.ggml.tokens) or -1")
            }
        }
        if let arch = file.architecture, let declared = file.metadata["\(arch).vocab_size"]?.intValue,
            declared != count
        {
            throw GGUFError.inconsistent(
                path: file.path,
                what: "\(arch).vocab_size is \(declared) but tokenizer.ggml.tokens has \(count) tokens")
        }
        if let embedding = file.tensor(named: "token_embd.weight"), embedding.dimensions.count == 2,
            embedding.rowCount != count
        {
            throw GGUFError.inconsistent(
                path: file.path,
                what: "tokenizer.ggml.tokens has \(count) tokens but token_embd.weight has \(embedding.rowCount) rows "
                    + "(one per token)")
        }
    }

    // MARK: Tensors

    /// Tensor types that fit their data (the data regions tile the data section as every GGUF writer lays them
    /// out), 1-D tensors (norms, biases) of a float type, layer tensors for exactly `block_count` layers, and the
    /// embedding and attention shapes the hyperparameters imply.
    public static func validateTensors(_ file: GGUFFile) throws {
        try validateLayout(file)
        for t in file.tensors {
            if t.dimensions.count == 1 {
                guard [.f32, .f16, .bf16, .i32].contains(t.type) else {
                    throw GGUFError.inconsistent(
                        path: file.path,
                        what: "tensor '\(t.name)' is a vector of type \(t.type); vectors (norms, biases) are stored as "
                            + "F32 — its declared type was changed")
                }
            } else if [.i8, .i16, .i32, .i64, .f64].contains(t.type) {
                throw GGUFError.inconsistent(
                    path: file.path,
                    what: "tensor '\(t.name)' is a matrix of type \(t.type), which no model uses — its declared type "
                        + "was changed")
            }
        }
        guard let arch = file.architecture else { return }
        var highestBlock = -1
        for t in file.tensors where t.name.hasPrefix("blk.") {
            let digits = t.name.dropFirst(4).prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { continue }
            // A block number beyond Int (blk.18446744073709551615.…) counts as the largest: it disagrees with any
            // block_count.
            let n = Int(digits) ?? Int.max - 1
            if n > highestBlock { highestBlock = n }
        }
        let layers = file.metadata["\(arch).block_count"]?.intValue
        if highestBlock >= 0, let layers, layers != highestBlock + 1 {
            throw GGUFError.inconsistent(
                path: file.path,
                what: "\(arch).block_count is \(layers) but the file has tensors for \(highestBlock + 1) blocks "
                    + "(blk.0 … blk.\(highestBlock))")
        }
        guard let embedding = file.metadata["\(arch).embedding_length"]?.intValue else { return }
        if let t = file.tensor(named: "token_embd.weight"), t.dimensions.count == 2, t.rowLength != embedding {
            throw GGUFError.inconsistent(
                path: file.path,
                what: "token_embd.weight rows hold \(t.rowLength) values but \(arch).embedding_length is \(embedding)")
        }
        guard let heads = file.metadata["\(arch).attention.head_count"]?.intValue, heads > 0 else { return }
        let kvHeads = file.metadata["\(arch).attention.head_count_kv"]?.intValue ?? heads
        let keyLength = file.metadata["\(arch).attention.key_length"]?.intValue ?? embedding / heads
        let valueLength = file.metadata["\(arch).attention.value_length"]?.intValue ?? keyLength
        let expected: [(String, Int)] = [
            // Wrapping products: the ranges above (checked first by `validate`) keep them exact.
            ("attn_q", heads &* keyLength), ("attn_k", kvHeads &* keyLength), ("attn_v", kvHeads &* valueLength),
        ]
        for layer in 0..<max(highestBlock + 1, 0) {
            for (name, rows) in expected {
                guard let t = file.tensor(named: "blk.\(layer).\(name).weight"), t.dimensions.count == 2 else {
                    continue
                }
                guard t.rowLength == embedding, t.rowCount == rows else {
                    throw GGUFError.inconsistent(
                        path: file.path,
                        what: "tensor '\(t.name)' has shape \(t.dimensions) but the attention hyperparameters "
                            + "(\(heads) heads, \(kvHeads) KV heads, head size \(keyLength), embedding \(embedding)) "
                            + "give [\(embedding), \(rows)]")
                }
            }
        }
    }

    /// Every GGUF writer (llama.cpp's gguf.cpp, gguf-py) places the tensors one after another, each padded to the
    /// alignment. A tensor whose declared type or shape was changed then overlaps the next one or leaves a gap
    /// wider than the padding.
    static func validateLayout(_ file: GGUFFile) throws {
        let ordered = file.tensors.sorted { $0.fileOffset < $1.fileOffset }
        guard let first = ordered.first else { return }
        // ggml reads tensors in place and asserts (aborts) on data that is not 32-byte aligned in memory; every
        // writer aligns to 32 at least, so a smaller general.alignment leaves data where no engine may read it.
        if let t = ordered.first(where: { $0.fileOffset % tensorDataAlignment != 0 }) {
            throw GGUFError.implausible(
                path: file.path, key: "general.alignment", value: "\(file.alignment)",
                problem: "tensor '\(t.name)' then starts at file offset \(t.fileOffset), which is not a multiple of "
                    + "\(tensorDataAlignment) (ggml's tensor alignment); expected \(tensorDataAlignment) or a larger "
                    + "power of two")
        }
        guard first.fileOffset == file.dataOffset else {
            throw GGUFError.inconsistent(
                path: file.path,
                what: "the first tensor's data ('\(first.name)') starts \(first.fileOffset - file.dataOffset) bytes "
                    + "into the data section instead of at its start")
        }
        for (a, b) in zip(ordered, ordered.dropFirst()) {
            let end = a.fileOffset + a.byteCount
            guard end <= b.fileOffset, b.fileOffset - end < file.alignment else {
                let how =
                    end > b.fileOffset
                    ? "overlaps the data of '\(b.name)' by \(end - b.fileOffset) bytes"
                    : "ends \(b.fileOffset - end) bytes before the data of '\(b.name)' (padding is under "
                        + "\(file.alignment))"
                throw GGUFError.inconsistent(
                    path: file.path,
                    what: "tensor '\(a.name)' (\(a.type), shape \(a.dimensions), \(a.byteCount) bytes) \(how) — its "
                        + "declared type or shape does not match its data")
            }
        }
    }
}
