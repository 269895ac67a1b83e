import GGUF
import PureSwiftKernels

/// Reads an architecture's hyperparameters (`<architecture>.<key>`) with errors that name the file and the key.
struct HyperparameterReader {
    let file: GGUFFile
    let architecture: String

    func key(_ name: String) -> String { "\(architecture).\(name)" }

    /// A positive integer; `fallback` when the key is absent (without one, absence is an error naming the key).
    func int(_ name: String, default fallback: Int? = nil) throws -> Int { try read(name, fallback, positive) }

    /// A finite number; `fallback` when the key is absent (without one, absence is an error naming the key).
    func float(_ name: String, default fallback: Float? = nil) throws -> Float { try read(name, fallback, number) }

    private func read<T>(_ name: String, _ fallback: T?, _ convert: (GGUFValue, String) throws -> T) throws -> T {
        let k = key(name)
        guard let value = file.metadata[k] else {
            if let fallback { return fallback }
            throw GGUFError.missingKey(path: file.path, key: k)
        }
        return try convert(value, k)
    }

    func string(_ name: String) -> String? { file.string(key(name)) }

    private func positive(_ value: GGUFValue, _ k: String) throws -> Int {
        if case .array = value {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: k, problem: "holds per-layer values; the pure-Swift engine needs one value")
        }
        guard let i = value.intValue else {
            throw GGUFError.wrongKeyType(path: file.path, key: k, expected: "an integer", found: value.type.description)
        }
        guard i > 0, i <= 1 << 30 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: k, problem: "is \(i), expected a positive count")
        }
        return i
    }

    private func number(_ value: GGUFValue, _ k: String) throws -> Float {
        guard let d = value.doubleValue, d.isFinite else {
            throw GGUFError.wrongKeyType(path: file.path, key: k, expected: "a number", found: value.type.description)
        }
        return Float(d)
    }
}

/// Finds a model's tensors and checks their shapes and types, with errors that name the tensor.
struct TensorLoader {
    let file: GGUFFile

    /// A weight matrix of `rows` rows of `columns` values (ggml dimensions `[columns, rows]`).
    func matrix(_ name: String, rows: Int, columns: Int) throws -> WeightMatrix {
        let info = try file.requireTensor(name)
        guard info.dimensions == [columns, rows] else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: name, expected: "[\(columns), \(rows)]", found: info.dimensions)
        }
        return try WeightMatrix(file: file, tensor: info)
    }

    /// An F32 vector of `count` values.
    func vector(_ name: String, count: Int) throws -> UnsafePointer<Float> {
        let info = try file.requireTensor(name)
        guard info.type == .f32 else {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: name, type: info.type.description, supported: [GGMLType.f32.description])
        }
        guard info.elementCount == count else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: name, expected: "[\(count)]", found: info.dimensions)
        }
        return file.data(of: info).assumingMemoryBound(to: Float.self)
    }

    /// An F32 vector when the file has it.
    func optionalVector(_ name: String, count: Int) throws -> UnsafePointer<Float>? {
        guard file.tensor(named: name) != nil else { return nil }
        return try vector(name, count: count)
    }
}

extension WeightMatrix {
    /// The tensor `info` of `file` as a matrix. Throws `PureSwiftError.unsupportedTensorType` for a type without
    /// kernels and `.badTensorShape` when a row is not a whole number of blocks.
    public init(file: GGUFFile, tensor info: GGUFTensorInfo) throws {
        guard Self.supportedTypes.contains(info.type) else {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: info.name, type: info.type.description,
                supported: Self.supportedTypes.map(\.description))
        }
        guard info.rowLength % info.type.blockSize == 0, info.dimensions.count <= 2 else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: info.name, expected: "a 2-D matrix whose rows hold whole \(info.type) blocks",
                found: info.dimensions)
        }
        self.init(
            name: info.name, type: info.type, rows: info.rowCount, columns: info.rowLength, rowBytes: info.rowBytes,
            base: file.data(of: info))
    }
}

/// The weights around a decoder's blocks: token embedding, final RMSNorm and output matrix (the embedding itself
/// when the file has no `output.weight`: a tied output reads the same bytes), and the owner of any matrices
/// regrouped for the kernels.
struct DecoderWeights {
    let tokenEmbedding: WeightMatrix
    let outputNorm: RMSNorm
    let output: WeightMatrix
    let repacked: RepackedWeights

    /// With `repackWeights`, Q4_1 projection matrices are copied into the paired layout (`RepackedWeights`);
    /// otherwise every matrix is read in place from the mapping.
    init(file: GGUFFile, dimensions d: DecoderDimensions, repackWeights: Bool) throws {
        let (vocabularySize, embedding, normEpsilon) = (d.vocabularySize, d.embedding, d.normEpsilon)
        let t = TensorLoader(file: file)
        repacked = RepackedWeights(file: file, enabled: repackWeights)
        tokenEmbedding = try t.matrix("token_embd.weight", rows: vocabularySize, columns: embedding)
        outputNorm = RMSNorm(weight: try t.vector("output_norm.weight", count: embedding), epsilon: normEpsilon)
        output =
            file.tensor(named: "output.weight") != nil
            ? try repacked.prepare(t.matrix("output.weight", rows: vocabularySize, columns: embedding))
            : tokenEmbedding
    }

    /// The tensors of block `index` (`blk.<index>.<name>`).
    func block(_ index: Int, file: GGUFFile, normEpsilon: Float) -> BlockTensors {
        BlockTensors(loader: TensorLoader(file: file), packed: repacked, prefix: "blk.\(index).", epsilon: normEpsilon)
    }
}

/// One block's attention weights: the input RMSNorm and the Q, K, V and output projections.
struct AttentionWeights {
    let norm: RMSNorm
    let query: Projection
    let key: Projection
    let value: Projection
    let output: Projection
}

/// Reads one transformer block's tensors by their names within the block.
struct BlockTensors {
    let loader: TensorLoader
    let packed: RepackedWeights
    let prefix: String
    let epsilon: Float

    /// `<name>.weight` as an RMSNorm over `count` values.
    func norm(_ name: String, count: Int) throws -> RMSNorm {
        RMSNorm(weight: try loader.vector(prefix + name + ".weight", count: count), epsilon: epsilon)
    }

    /// `<name>.weight` (`rows` × `columns`) and `<name>.bias` when present.
    func projection(_ name: String, rows: Int, columns: Int) throws -> Projection {
        try loader.projection(prefix + name, rows: rows, columns: columns, packed: packed)
    }

    /// The attention block's weights: `attn_norm`, `attn_q`, `attn_k`, `attn_v` and `attn_output`.
    func attention(_ d: DecoderDimensions) throws -> AttentionWeights {
        AttentionWeights(
            norm: try norm("attn_norm", count: d.embedding),
            query: try projection("attn_q", rows: d.queryDimensions, columns: d.embedding),
            key: try projection("attn_k", rows: d.kvDimensions, columns: d.embedding),
            value: try projection("attn_v", rows: d.kvDimensions, columns: d.embedding),
            output: try projection("attn_output", rows: d.embedding, columns: d.queryDimensions))
    }

    /// The attention block's weights with Q, K and V fused in one matrix `attn_qkv` (Phi-3), its rows Q's, then K's,
    /// then V's: each read as a view of its rows, as llama.cpp's `build_qkv` views the fused product. Separate
    /// `attn_q`, `attn_k`, `attn_v` when the file has no `attn_qkv`.
    func fusedAttention(_ d: DecoderDimensions) throws -> AttentionWeights {
        guard loader.file.tensor(named: prefix + "attn_qkv.weight") != nil else { return try attention(d) }
        let (q, kv) = (d.queryDimensions, d.kvDimensions)
        let parts = try fusedProjection("attn_qkv", parts: [q, kv, kv], columns: d.embedding)
        return AttentionWeights(
            norm: try norm("attn_norm", count: d.embedding), query: parts[0], key: parts[1], value: parts[2],
            output: try projection("attn_output", rows: d.embedding, columns: d.queryDimensions))
    }

    /// The gated feed-forward block with gate and up fused in one `ffn_up` of `2 · width` rows (Phi-3): the first
    /// half is the gate, the second the up projection (ggml_swiglu of one row: silu of its first half times its
    /// second), and `ffn_down`.
    func fusedGatedFeedForward(width: Int, embedding: Int) throws -> FeedForwardWeights {
        let parts = try fusedProjection("ffn_up", parts: [width, width], columns: embedding)
        return FeedForwardWeights(
            gate: parts[0], up: parts[1], down: try projection("ffn_down", rows: embedding, columns: width))
    }

    /// `<name>.weight` of `parts.reduce(0, +)` rows, and its bias when present, as one projection per run of rows of
    /// the sizes in `parts`, in order. Each output value is its row's dot product either way, so the views compute
    /// what the fused product computes.
    func fusedProjection(_ name: String, parts: [Int], columns: Int) throws -> [Projection] {
        let whole = try loader.matrix(prefix + name + ".weight", rows: parts.reduce(0, +), columns: columns)
        let bias = try loader.optionalVector(prefix + name + ".bias", count: whole.rows)
        var start = 0
        return try parts.map { rows in
            defer { start += rows }
            let view = WeightMatrix(
                name: whole.name, type: whole.type, rows: rows, columns: columns, rowBytes: whole.rowBytes,
                base: whole.row(start))
            return Projection(weight: try packed.prepare(view), bias: bias.map { $0 + start })
        }
    }

    /// The gated feed-forward block `ffn_gate`, `ffn_up`, `ffn_down` of hidden width `width`.
    func gatedFeedForward(width: Int, embedding: Int) throws -> FeedForwardWeights {
        FeedForwardWeights(
            gate: try projection("ffn_gate", rows: width, columns: embedding),
            up: try projection("ffn_up", rows: width, columns: embedding),
            down: try projection("ffn_down", rows: embedding, columns: width))
    }
}
