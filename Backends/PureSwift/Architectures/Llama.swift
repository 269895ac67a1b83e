import GGUF

// The llama architecture (Llama 1–3, SmolLM, Mistral-style dense models), as llama.cpp's src/models/llama.cpp
// builds it:
//
//   x = token_embd[token]
//   per layer:  h = x + Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x))
//               x = h + Wdown · (silu(Wgate · norm(h)) ⊙ Wup · norm(h))
//   logits = output · norm(x)        (output = token_embd when the file has no output.weight)
//
// RMSNorm everywhere, RoPE in the "normal" mode (adjacent pairs; the GGUF converter permuted Wq/Wk for it), grouped-
// query attention (heads share KV heads in groups of head_count / head_count_kv).

/// Hyperparameters of a llama-family model, read from the model's own `llama.*` keys.
public struct LlamaConfiguration: Sendable, Equatable {
    public var layers: Int
    /// Width of the residual stream (`embedding_length`).
    public var embedding: Int
    public var feedForward: Int
    public var heads: Int
    public var kvHeads: Int
    public var headDimension: Int
    public var trainingContextLength: Int
    public var vocabularySize: Int
    public var normEpsilon: Float
    public var attentionScale: Float
    public var rope: RoPEConfiguration

    public var queryDimensions: Int { heads * headDimension }
    public var kvDimensions: Int { kvHeads * headDimension }

    /// Reads the configuration of `file` (whose `general.architecture` is `architecture`).
    public init(file: GGUFFile, architecture: String = "llama") throws {
        let hp = HyperparameterReader(file: file, architecture: architecture)
        layers = try hp.int("block_count")
        embedding = try hp.int("embedding_length")
        feedForward = try hp.int("feed_forward_length")
        heads = try hp.int("attention.head_count")
        kvHeads = try hp.int("attention.head_count_kv", default: heads)
        headDimension = try hp.int("attention.key_length", default: embedding / heads)
        let valueLength = try hp.int("attention.value_length", default: headDimension)
        trainingContextLength = try hp.int("context_length")
        normEpsilon = try hp.float("attention.layer_norm_rms_epsilon")
        let experts = try hp.int("expert_count", default: 1)
        if file.metadata[hp.key("expert_count")] != nil && experts > 1 {
            throw PureSwiftError.unsupportedFeature(path: file.path, feature: "mixture of experts (\(experts) experts)")
        }
        guard valueLength == headDimension else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: hp.key("attention.value_length"),
                problem: "is \(valueLength) but the key length is \(headDimension); llama needs them equal")
        }
        guard heads % kvHeads == 0 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: hp.key("attention.head_count_kv"),
                problem: "is \(kvHeads), which does not divide attention.head_count \(heads)")
        }
        guard headDimension % 16 == 0 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: hp.key("attention.key_length"),
                problem: "gives a head size of \(headDimension); the pure-Swift engine needs a multiple of 16")
        }
        let ropeDimensions = try hp.int("rope.dimension_count", default: headDimension)
        guard ropeDimensions == headDimension else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: hp.key("rope.dimension_count"),
                problem: "is \(ropeDimensions) but the head size is \(headDimension); llama rotates whole heads")
        }
        // Linear scaling divides positions by the factor (llama.cpp reads it whatever the scaling type says);
        // YaRN and LongRoPE need more than that and are not implemented.
        let scalingType = hp.string("rope.scaling.type") ?? "none"
        guard scalingType == "none" || scalingType == "linear" else {
            throw PureSwiftError.unsupportedFeature(
                path: file.path, feature: "RoPE scaling '\(scalingType)' (\(hp.key("rope.scaling.type")))")
        }
        let factor = try hp.float("rope.scaling.factor", default: try hp.float("rope.scale_linear", default: 0))
        let frequencyScale: Float = factor == 0 ? 1 : 1 / factor
        rope = RoPEConfiguration(
            mode: .normal, dimensions: ropeDimensions, frequencyBase: try hp.float("rope.freq_base", default: 10_000),
            frequencyScale: frequencyScale)
        let scale = try hp.float("attention.scale", default: 0)
        attentionScale = scale == 0 ? 1 / Float(headDimension).squareRoot() : scale
        let embeddings = try file.requireTensor("token_embd.weight")
        vocabularySize = embeddings.rowCount
        if let declared = file.int(hp.key("vocab_size")), declared != vocabularySize {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: hp.key("vocab_size"),
                problem: "is \(declared) but token_embd.weight has \(vocabularySize) rows")
        }
    }
}

/// One transformer block's weights (memory-mapped).
struct LlamaLayer {
    let attentionNorm: UnsafePointer<Float>
    let query: WeightMatrix
    let key: WeightMatrix
    let value: WeightMatrix
    let output: WeightMatrix
    let queryBias: UnsafePointer<Float>?
    let keyBias: UnsafePointer<Float>?
    let valueBias: UnsafePointer<Float>?
    let outputBias: UnsafePointer<Float>?
    let feedForwardNorm: UnsafePointer<Float>
    let gate: WeightMatrix
    let up: WeightMatrix
    let down: WeightMatrix
    let gateBias: UnsafePointer<Float>?
    let upBias: UnsafePointer<Float>?
    let downBias: UnsafePointer<Float>?
}

/// A llama-architecture model: configuration plus weights read in place from the GGUF file.
public final class LlamaModel: LanguageModel, @unchecked Sendable {
    public let file: GGUFFile
    public let configuration: LlamaConfiguration
    let tokenEmbedding: WeightMatrix
    let outputNorm: UnsafePointer<Float>
    let output: WeightMatrix
    let layers: [LlamaLayer]

    public var architecture: String { "llama" }
    public var vocabularySize: Int { configuration.vocabularySize }
    public var trainingContextLength: Int { configuration.trainingContextLength }
    public var kvBytesPerPosition: Int { configuration.layers * configuration.kvDimensions * 2 * 2 }

    public init(file: GGUFFile) throws {
        self.file = file
        var c = try LlamaConfiguration(file: file)
        let t = TensorLoader(file: file)
        let dim = c.embedding
        tokenEmbedding = try t.matrix("token_embd.weight", rows: c.vocabularySize, columns: dim)
        outputNorm = try t.vector("output_norm.weight", count: dim)
        output =
            file.tensor(named: "output.weight") != nil
            ? try t.matrix("output.weight", rows: c.vocabularySize, columns: dim) : tokenEmbedding
        if let factors = try t.optionalVector("rope_freqs.weight", count: c.rope.dimensions / 2) {
            c.rope.frequencyFactors = Array(UnsafeBufferPointer(start: factors, count: c.rope.dimensions / 2))
        }
        configuration = c
        var layers: [LlamaLayer] = []
        for i in 0..<c.layers {
            let p = "blk.\(i)."
            layers.append(
                LlamaLayer(
                    attentionNorm: try t.vector(p + "attn_norm.weight", count: dim),
                    query: try t.matrix(p + "attn_q.weight", rows: c.queryDimensions, columns: dim),
                    key: try t.matrix(p + "attn_k.weight", rows: c.kvDimensions, columns: dim),
                    value: try t.matrix(p + "attn_v.weight", rows: c.kvDimensions, columns: dim),
                    output: try t.matrix(p + "attn_output.weight", rows: dim, columns: c.queryDimensions),
                    queryBias: try t.optionalVector(p + "attn_q.bias", count: c.queryDimensions),
                    keyBias: try t.optionalVector(p + "attn_k.bias", count: c.kvDimensions),
                    valueBias: try t.optionalVector(p + "attn_v.bias", count: c.kvDimensions),
                    outputBias: try t.optionalVector(p + "attn_output.bias", count: dim),
                    feedForwardNorm: try t.vector(p + "ffn_norm.weight", count: dim),
                    gate: try t.matrix(p + "ffn_gate.weight", rows: c.feedForward, columns: dim),
                    up: try t.matrix(p + "ffn_up.weight", rows: c.feedForward, columns: dim),
                    down: try t.matrix(p + "ffn_down.weight", rows: dim, columns: c.feedForward),
                    gateBias: try t.optionalVector(p + "ffn_gate.bias", count: c.feedForward),
                    upBias: try t.optionalVector(p + "ffn_up.bias", count: c.feedForward),
                    downBias: try t.optionalVector(p + "ffn_down.bias", count: dim)))
        }
        self.layers = layers
    }

    public func makeRunner(contextLength: Int, batchSize: Int, threads: Int) -> any ModelRunner {
        LlamaRunner(model: self, contextLength: contextLength, batchSize: batchSize, threads: threads)
    }
}

/// One session's llama state: KV cache and scratch buffers, all allocated up front.
final class LlamaRunner: ModelRunner {
    let model: LlamaModel
    let cache: KVCache
    let contextLength: Int
    let batchSize: Int
    let threads: Int
    var position: Int { cache.count }
    var vocabularySize: Int { model.vocabularySize }

    private let activations: QuantizedActivations
    private let x: UnsafeMutablePointer<Float>  // (batch, embedding) residual stream
    private let xb: UnsafeMutablePointer<Float>  // (batch, embedding) normed input / projection output
    private let q: UnsafeMutablePointer<Float>  // (batch, heads · headDimension)
    private let k: UnsafeMutablePointer<Float>  // (batch, kvHeads · headDimension)
    private let v: UnsafeMutablePointer<Float>  // (batch, kvHeads · headDimension)
    private let attention: UnsafeMutablePointer<Float>  // (batch, heads · headDimension) attention output
    private let gate: UnsafeMutablePointer<Float>  // (batch, feedForward)
    private let up: UnsafeMutablePointer<Float>  // (batch, feedForward)
    private let ropeTables: UnsafeMutablePointer<Float>  // (batch, headDimension) cos/sin per position
    private let queries: UnsafeMutablePointer<Float>  // (threads, headDimension) half-rounded query
    private let accumulators: UnsafeMutablePointer<Float>  // (threads, headDimension)
    private let scores: UnsafeMutablePointer<Float>  // (threads, contextLength)
    private let keysFloat: UnsafeMutablePointer<Float>  // (contextLength, kvHeads · headDimension) one layer's keys
    private let valuesFloat: UnsafeMutablePointer<Float>  // (contextLength, kvHeads · headDimension)
    private var buffers: [UnsafeMutablePointer<Float>] = []

    init(model: LlamaModel, contextLength: Int, batchSize: Int, threads: Int) {
        self.model = model
        let c = model.configuration
        self.contextLength = contextLength
        self.batchSize = max(1, batchSize)
        self.threads = max(1, threads)
        cache = KVCache(layers: c.layers, capacity: contextLength, kvDimensions: c.kvDimensions)
        let b = self.batchSize
        activations = QuantizedActivations(
            rows: b, columns: max(c.embedding, c.queryDimensions, c.feedForward))
        var buffers: [UnsafeMutablePointer<Float>] = []
        func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(1, n))
            p.initialize(repeating: 0, count: max(1, n))
            buffers.append(p)
            return p
        }
        x = buffer(b * c.embedding)
        xb = buffer(b * c.embedding)
        q = buffer(b * c.queryDimensions)
        k = buffer(b * c.kvDimensions)
        v = buffer(b * c.kvDimensions)
        attention = buffer(b * c.queryDimensions)
        gate = buffer(b * c.feedForward)
        up = buffer(b * c.feedForward)
        ropeTables = buffer(b * c.rope.dimensions)
        queries = buffer(self.threads * c.headDimension)
        accumulators = buffer(self.threads * c.headDimension)
        scores = buffer(self.threads * contextLength)
        keysFloat = buffer(contextLength * c.kvDimensions)
        valuesFloat = buffer(contextLength * c.kvDimensions)
        self.buffers = buffers
    }

    deinit {
        for p in buffers { p.deallocate() }
    }

    func reset() { cache.count = 0 }

    /// `out = W · input` for `rows` rows of `input` (row stride `columns` of W), preparing the activations in the
    /// format W reads unless they already are.
    private func project(
        _ w: WeightMatrix, _ input: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>,
        bias: UnsafePointer<Float>?, prepared: inout ActivationFormat?, exact: Bool
    ) {
        if prepared != w.activationFormat {
            activations.prepare(
                input, rows: rows, columns: w.columns, stride: w.columns, format: w.activationFormat, threads: threads)
            prepared = w.activationFormat
        }
        matmul(w, activations, out: out, outStride: w.rows, threads: threads, exact: exact)
        if let bias {
            for r in 0..<rows {
                let o = out + r * w.rows
                for i in 0..<w.rows { o[i] += bias[i] }
            }
        }
    }

    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>) {
        let c = model.configuration
        let dim = c.embedding
        let hd = c.headDimension
        var n = tokens.count
        guard n > 0 else { return }
        precondition(n <= batchSize && cache.count + n <= contextLength, "batch does not fit the runner")
        let start = cache.count
        // Batches llama.cpp would run through its vector attention path also get its exact rounding (see
        // Kernels/LlamaCppExact.swift); long prompts take the fast kernels.
        let exact = true  // EXPERIMENT n < halfAccumulationBatchLimit

        for b in 0..<n {
            model.tokenEmbedding.dequantizeRow(Int(tokens[b]), into: x + b * dim)
            ropeTable(ropeTables + b * c.rope.dimensions, position: start + b, configuration: c.rope)
        }

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            // Attention block.
            for b in 0..<n {
                rmsNorm(x + b * dim, weight: layer.attentionNorm, out: xb + b * dim, count: dim, epsilon: c.normEpsilon)
            }
            var prepared: ActivationFormat? = nil
            project(layer.query, xb, rows: n, into: q, bias: layer.queryBias, prepared: &prepared, exact: exact)
            project(layer.key, xb, rows: n, into: k, bias: layer.keyBias, prepared: &prepared, exact: exact)
            project(layer.value, xb, rows: n, into: v, bias: layer.valueBias, prepared: &prepared, exact: exact)
            for b in 0..<n {
                let table = ropeTables + b * c.rope.dimensions
                for h in 0..<c.heads {
                    applyRoPEExact(q + b * c.queryDimensions + h * hd, table: table, dimensions: hd, mode: c.rope.mode)
                }
                for h in 0..<c.kvHeads {
                    applyRoPEExact(k + b * c.kvDimensions + h * hd, table: table, dimensions: hd, mode: c.rope.mode)
                }
                storeHalves(
                    k + b * c.kvDimensions, into: cache.keys(layer: l, position: start + b), count: c.kvDimensions)
                storeHalves(
                    v + b * c.kvDimensions, into: cache.values(layer: l, position: start + b), count: c.kvDimensions)
            }
            attend(layer: l, tokens: n, start: start)

            // After the last layer's attention only the rows whose logits are wanted matter.
            if l == c.layers - 1 && outputRows != 0..<n {
                for (i, r) in outputRows.enumerated() where i != r {
                    (attention + i * c.queryDimensions).update(
                        from: attention + r * c.queryDimensions, count: c.queryDimensions)
                    (x + i * dim).update(from: x + r * dim, count: dim)
                }
                n = outputRows.count
                outputRows = 0..<n
                if n == 0 { break }
            }

            prepared = nil
            project(
                layer.output, attention, rows: n, into: xb, bias: layer.outputBias, prepared: &prepared, exact: exact)
            for i in 0..<n * dim { x[i] += xb[i] }

            // Feed-forward block.
            for b in 0..<n {
                rmsNorm(
                    x + b * dim, weight: layer.feedForwardNorm, out: xb + b * dim, count: dim, epsilon: c.normEpsilon)
            }
            prepared = nil
            project(layer.gate, xb, rows: n, into: gate, bias: layer.gateBias, prepared: &prepared, exact: exact)
            project(layer.up, xb, rows: n, into: up, bias: layer.upBias, prepared: &prepared, exact: exact)
            swiGLUExact(gate: gate, up: up, out: gate, count: n * c.feedForward)
            prepared = nil
            project(layer.down, gate, rows: n, into: xb, bias: layer.downBias, prepared: &prepared, exact: exact)
            for i in 0..<n * dim { x[i] += xb[i] }
        }
        cache.count = start + tokens.count

        guard !outputRows.isEmpty else { return }
        for (i, r) in outputRows.enumerated() {
            rmsNorm(x + r * dim, weight: model.outputNorm, out: xb + i * dim, count: dim, epsilon: c.normEpsilon)
        }
        activations.prepare(
            xb, rows: outputRows.count, columns: dim, stride: dim, format: model.output.activationFormat,
            threads: threads)
        matmul(model.output, activations, out: logits, outStride: c.vocabularySize, threads: threads, exact: exact)
    }

    /// Attention of `tokens` new positions (from `start`) over the cache, every head, into `attention`.
    private func attend(layer l: Int, tokens n: Int, start: Int) {
        let c = model.configuration
        let hd = c.headDimension
        let group = c.heads / c.kvHeads
        let keys = cache.keys(layer: l, position: 0)
        let values = cache.values(layer: l, position: 0)
        let q = self.q
        let attention = self.attention
        let queries = self.queries
        let accumulators = self.accumulators
        let scores = self.scores
        let contextLength = self.contextLength
        let workers = n * c.heads * (start + n) < 4096 ? 1 : threads
        if n < halfAccumulationBatchLimit {
            // llama.cpp's vector path, reproduced exactly (see Kernels/Attention.swift).
            parallelChunksIndexed(n * c.heads, threads: workers) { worker, items in
                let query = queries + worker * hd
                let accumulator = accumulators + worker * hd
                for item in items {
                    let b = item / c.heads
                    let h = item % c.heads
                    let kvOffset = (h / group) * hd
                    let head = q + b * c.queryDimensions + h * hd
                    for i in 0..<hd { query[i] = roundToHalf(head[i]) }
                    attendHalfCacheVectorPath(
                        query: query, keys: keys + kvOffset, values: values + kvOffset, stride: c.kvDimensions,
                        count: start + b + 1, dimensions: hd, scale: c.attentionScale, accumulator: accumulator,
                        out: attention + b * c.queryDimensions + h * hd)
                }
            }
            return
        }
        // Large batches: convert the layer's cached keys and values to float once, then attend in float.
        let positions = start + n
        let keysFloat = self.keysFloat
        let valuesFloat = self.valuesFloat
        parallelChunks(positions, threads: threads) { rows in
            let first = rows.lowerBound * c.kvDimensions
            halvesToFloats(keys + first, keysFloat + first, count: rows.count * c.kvDimensions)
            halvesToFloats(values + first, valuesFloat + first, count: rows.count * c.kvDimensions)
        }
        parallelChunksIndexed(n * c.heads, threads: workers) { worker, items in
            let score = scores + worker * contextLength
            for item in items {
                let b = item / c.heads
                let h = item % c.heads
                let kvOffset = (h / group) * hd
                attendFloatCache(
                    query: q + b * c.queryDimensions + h * hd, keys: keysFloat + kvOffset,
                    values: valuesFloat + kvOffset, stride: c.kvDimensions, count: start + b + 1, dimensions: hd,
                    scale: c.attentionScale, scores: score, out: attention + b * c.queryDimensions + h * hd)
            }
        }
    }
}
