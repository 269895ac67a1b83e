import Foundation
import GGUF
import PureSwiftKernels

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
    /// The Q4_1 matrices regrouped for the kernels (owner of the copies `layers` and `output` point into).
    let repacked: RepackedWeights

    public var architecture: String { "llama" }
    public var vocabularySize: Int { configuration.vocabularySize }
    public var trainingContextLength: Int { configuration.trainingContextLength }
    public var kvBytesPerPosition: Int { configuration.layers * configuration.kvDimensions * 2 * 2 }

    /// The model in `file`; with `repackWeights` its Q4_1 projection matrices are copied into the paired layout
    /// (`RepackedWeights`), otherwise every matrix is read in place from the mapping.
    public init(file: GGUFFile, repackWeights: Bool = true) throws {
        self.file = file
        var c = try LlamaConfiguration(file: file)
        let t = TensorLoader(file: file)
        let packed = RepackedWeights(file: file, enabled: repackWeights)
        repacked = packed
        let dim = c.embedding
        tokenEmbedding = try t.matrix("token_embd.weight", rows: c.vocabularySize, columns: dim)
        outputNorm = try t.vector("output_norm.weight", count: dim)
        // A tied output matrix stays as it is: embedding lookups read the same bytes.
        output =
            file.tensor(named: "output.weight") != nil
            ? try packed.prepare(t.matrix("output.weight", rows: c.vocabularySize, columns: dim)) : tokenEmbedding
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
                    query: try packed.prepare(t.matrix(p + "attn_q.weight", rows: c.queryDimensions, columns: dim)),
                    key: try packed.prepare(t.matrix(p + "attn_k.weight", rows: c.kvDimensions, columns: dim)),
                    value: try packed.prepare(t.matrix(p + "attn_v.weight", rows: c.kvDimensions, columns: dim)),
                    output: try packed.prepare(
                        t.matrix(p + "attn_output.weight", rows: dim, columns: c.queryDimensions)),
                    queryBias: try t.optionalVector(p + "attn_q.bias", count: c.queryDimensions),
                    keyBias: try t.optionalVector(p + "attn_k.bias", count: c.kvDimensions),
                    valueBias: try t.optionalVector(p + "attn_v.bias", count: c.kvDimensions),
                    outputBias: try t.optionalVector(p + "attn_output.bias", count: dim),
                    feedForwardNorm: try t.vector(p + "ffn_norm.weight", count: dim),
                    gate: try packed.prepare(t.matrix(p + "ffn_gate.weight", rows: c.feedForward, columns: dim)),
                    up: try packed.prepare(t.matrix(p + "ffn_up.weight", rows: c.feedForward, columns: dim)),
                    down: try packed.prepare(t.matrix(p + "ffn_down.weight", rows: dim, columns: c.feedForward)),
                    gateBias: try t.optionalVector(p + "ffn_gate.bias", count: c.feedForward),
                    upBias: try t.optionalVector(p + "ffn_up.bias", count: c.feedForward),
                    downBias: try t.optionalVector(p + "ffn_down.bias", count: dim)))
        }
        self.layers = layers
    }

    public func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws
        -> any ModelRunner
    {
        try LlamaRunner(
            model: self, contextLength: contextLength, batchSize: batchSize, threads: threads,
            kernels: options.kernels, batchedProducts: options.batchedProducts)
    }
}

/// One session's llama state: KV cache and scratch buffers, all allocated up front.
final class LlamaRunner: ModelRunner {
    let model: LlamaModel
    let cache: KVCache
    let contextLength: Int
    let batchSize: Int
    /// Tokens run through the layers together: a batch of `batchSize` goes in slices of this many, so the scratch
    /// buffers hold one slice (with the BLAS engine's products, whose `sgemm` wants whole batches: the batch).
    let microBatch: Int
    let threads: Int
    let kernels: any KernelSet
    let batchedProducts: (any BatchedProducts)?
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
    private let accumulators: UnsafeMutablePointer<Float>  // (threads, 2 · headDimension) attention scratch
    private let keysFloat: UnsafeMutablePointer<Float>  // (kvHeads · headDimension, tiledKeyStride) one layer's keys
    private let valuesFloat: UnsafeMutablePointer<Float>  // (contextLength, kvHeads · headDimension) its values
    private let weights: UnsafeMutablePointer<Float>  // (threads, attentionTileSize)
    private var buffers: [UnsafeMutablePointer<Float>] = []

    init(
        model: LlamaModel, contextLength: Int, batchSize: Int, threads: Int,
        kernels: any KernelSet, batchedProducts: (any BatchedProducts)?
    ) throws {
        self.model = model
        self.kernels = kernels
        self.batchedProducts = batchedProducts
        let c = model.configuration
        self.contextLength = contextLength
        self.batchSize = max(1, batchSize)
        microBatch = batchedProducts == nil ? min(self.batchSize, Self.microBatchLimit) : self.batchSize
        self.threads = max(1, threads)
        cache = try KVCache(layers: c.layers, capacity: contextLength, kvDimensions: c.kvDimensions)
        let b = microBatch
        activations = QuantizedActivations(
            rows: b, columns: max(c.embedding, c.queryDimensions, c.feedForward))
        var buffers: [UnsafeMutablePointer<Float>] = []
        func buffer(_ n: Int) throws -> UnsafeMutablePointer<Float> {
            do {
                let p = try allocateZeroed(Float.self, count: n, for: "the runner's scratch")
                buffers.append(p)
                return p
            } catch {
                for p in buffers { free(p) }  // the initializer fails, so deinit will not run
                throw error
            }
        }
        x = try buffer(b * c.embedding)
        xb = try buffer(b * c.embedding)
        q = try buffer(b * c.queryDimensions)
        k = try buffer(b * c.kvDimensions)
        v = try buffer(b * c.kvDimensions)
        attention = try buffer(b * c.queryDimensions)
        gate = try buffer(b * c.feedForward)
        up = try buffer(b * c.feedForward)
        ropeTables = try buffer(b * c.rope.dimensions)
        queries = try buffer(self.threads * c.headDimension)
        accumulators = try buffer(self.threads * 2 * c.headDimension)
        keysFloat = try buffer(tiledKeyStride(contextLength: contextLength) * c.kvDimensions)
        valuesFloat = try buffer(contextLength * c.kvDimensions)
        weights = try buffer(self.threads * attentionTileSize)
        self.buffers = buffers
    }

    deinit {
        for p in buffers { free(p) }
    }

    func reset() { cache.count = 0 }

    /// `out = W · input` for `rows` rows of `input` (row stride `columns` of W), preparing the activations in the
    /// format W reads unless they already are.
    private func project(
        _ w: WeightMatrix, _ input: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>,
        bias: UnsafePointer<Float>?, prepared: inout ActivationFormat?
    ) {
        if let batchedProducts, rows >= batchedProducts.minimumBatch,
            batchedProducts.multiply(w, input, rows: rows, out: out)
        {
            addBias(bias, to: out, rows: rows, count: w.rows)
            return
        }
        if prepared != w.activationFormat {
            activations.prepare(
                input, rows: rows, columns: w.columns, stride: w.columns, format: w.activationFormat, threads: threads,
                kernels: kernels)
            prepared = w.activationFormat
        }
        matmul(w, activations, out: out, outStride: w.rows, threads: threads, kernels: kernels)
        addBias(bias, to: out, rows: rows, count: w.rows)
    }

    /// Adds `bias` (when there is one) to each of `rows` rows of `count` values.
    private func addBias(_ bias: UnsafePointer<Float>?, to out: UnsafeMutablePointer<Float>, rows: Int, count: Int) {
        guard let bias else { return }
        for r in 0..<rows {
            let o = out + r * count
            for i in 0..<count { o[i] += bias[i] }
        }
    }

    typealias Projection = (WeightMatrix, UnsafeMutablePointer<Float>, UnsafePointer<Float>?)

    /// Two or three projections of the same input: one activation preparation and one parallel pass when the
    /// matrices read the same activation format, one by one otherwise.
    private func projectGroup(
        _ first: Projection, _ second: Projection, _ third: Projection?, _ input: UnsafePointer<Float>, rows: Int
    ) {
        let format = first.0.activationFormat
        let handedOver = batchedProducts.map { rows >= $0.minimumBatch } ?? false
        guard !handedOver, second.0.activationFormat == format, third.map({ $0.0.activationFormat == format }) ?? true
        else {
            var prepared: ActivationFormat? = nil
            project(first.0, input, rows: rows, into: first.1, bias: first.2, prepared: &prepared)
            project(second.0, input, rows: rows, into: second.1, bias: second.2, prepared: &prepared)
            if let third {
                project(third.0, input, rows: rows, into: third.1, bias: third.2, prepared: &prepared)
            }
            return
        }
        activations.prepare(
            input, rows: rows, columns: first.0.columns, stride: first.0.columns, format: format, threads: threads,
            kernels: kernels)
        matmul(
            (first.0, first.1), (second.0, second.1), third.map { ($0.0, $0.1) }, activations: activations,
            threads: threads, kernels: kernels)
        addBias(first.2, to: first.1, rows: rows, count: first.0.rows)
        addBias(second.2, to: second.1, rows: rows, count: second.0.rows)
        if let third { addBias(third.2, to: third.1, rows: rows, count: third.0.rows) }
    }

    /// The largest `microBatch` of the pure-Swift kernels. Smaller slices read the weights more often; larger
    /// ones gain nothing (the four-row products reuse a weight tile from cache either way) but hold more scratch:
    /// at 128, SmolLM2-135M's scratch is about 6 MiB instead of 21.
    static let microBatchLimit = 128

    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>) {
        precondition(tokens.count <= batchSize && cache.count + tokens.count <= contextLength, "batch does not fit")
        // llama.cpp picks its attention path by the size of the whole batch; every slice takes that path.
        let tiledAttention = tokens.count >= halfAccumulationBatchLimit
        var sliceStart = 0
        while sliceStart < tokens.count {
            let slice = sliceStart..<min(sliceStart + microBatch, tokens.count)
            let sliceOutputs = outputs.clamped(to: slice)
            let logitRows = sliceOutputs.isEmpty ? 0 : sliceOutputs.lowerBound - outputs.lowerBound
            evaluate(
                UnsafeBufferPointer(rebasing: tokens[slice]),
                outputs: (sliceOutputs.lowerBound - sliceStart)..<(sliceOutputs.upperBound - sliceStart),
                logits: logits + logitRows * vocabularySize, tiledAttention: tiledAttention)
            sliceStart = slice.upperBound
        }
    }

    /// `evaluate` for at most `microBatch` tokens, with attention on llama.cpp's tiled path or its vector path.
    private func evaluate(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>,
        tiledAttention: Bool
    ) {
        let c = model.configuration
        let dim = c.embedding
        let hd = c.headDimension
        var n = tokens.count
        guard n > 0 else { return }
        let start = cache.count

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
            projectGroup(
                (layer.query, q, layer.queryBias), (layer.key, k, layer.keyBias), (layer.value, v, layer.valueBias),
                xb, rows: n)
            for b in 0..<n {
                let table = ropeTables + b * c.rope.dimensions
                kernels.applyRoPE(
                    q + b * c.queryDimensions, heads: c.heads, table: table, dimensions: hd, mode: c.rope.mode)
                kernels.applyRoPE(
                    k + b * c.kvDimensions, heads: c.kvHeads, table: table, dimensions: hd, mode: c.rope.mode)
                storeHalves(
                    k + b * c.kvDimensions, into: cache.keys(layer: l, position: start + b), count: c.kvDimensions)
                storeHalves(
                    v + b * c.kvDimensions, into: cache.values(layer: l, position: start + b), count: c.kvDimensions)
            }
            attend(layer: l, tokens: n, start: start, tiled: tiledAttention)

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

            var prepared: ActivationFormat? = nil
            project(
                layer.output, attention, rows: n, into: xb, bias: layer.outputBias, prepared: &prepared)
            for i in 0..<n * dim { x[i] += xb[i] }

            // Feed-forward block.
            for b in 0..<n {
                rmsNorm(
                    x + b * dim, weight: layer.feedForwardNorm, out: xb + b * dim, count: dim, epsilon: c.normEpsilon)
            }
            projectGroup((layer.gate, gate, layer.gateBias), (layer.up, up, layer.upBias), nil, xb, rows: n)
            kernels.swiGLU(gate: gate, up: up, out: gate, count: n * c.feedForward)
            prepared = nil
            project(layer.down, gate, rows: n, into: xb, bias: layer.downBias, prepared: &prepared)
            for i in 0..<n * dim { x[i] += xb[i] }
        }
        cache.count = start + tokens.count

        guard !outputRows.isEmpty else { return }
        for (i, r) in outputRows.enumerated() {
            rmsNorm(x + r * dim, weight: model.outputNorm, out: xb + i * dim, count: dim, epsilon: c.normEpsilon)
        }
        activations.prepare(
            xb, rows: outputRows.count, columns: dim, stride: dim, format: model.output.activationFormat,
            threads: threads, kernels: kernels)
        matmul(model.output, activations, out: logits, outStride: c.vocabularySize, threads: threads, kernels: kernels)
    }

    /// Attention of `tokens` new positions (from `start`) over the cache, every head, into `attention`: on
    /// llama.cpp's tiled path or (not `tiled`) its vector path.
    private func attend(layer l: Int, tokens n: Int, start: Int, tiled: Bool) {
        let c = model.configuration
        let hd = c.headDimension
        let group = c.heads / c.kvHeads
        let keys = cache.keys(layer: l, position: 0)
        let values = cache.values(layer: l, position: 0)
        let q = self.q
        let attention = self.attention
        let queries = self.queries
        let accumulators = self.accumulators
        let contextLength = self.contextLength
        let workers = n * c.heads * (start + n) < 256 ? 1 : threads
        if !tiled {
            // llama.cpp's vector path, reproduced exactly (see Kernels/Attention.swift).
            let items = n * c.heads
            parallelChunksIndexed(workers, threads: workers) { worker, _ in
                let query = queries + worker * hd
                let accumulator = accumulators + worker * 2 * hd
                // Items dealt round-robin: later tokens attend to more positions, so contiguous shares would
                // leave the first worker waiting.
                for item in Swift.stride(from: worker, to: items, by: workers) {
                    let b = item / c.heads
                    let h = item % c.heads
                    let kvOffset = (h / group) * hd
                    let head = q + b * c.queryDimensions + h * hd
                    for i in 0..<hd { query[i] = roundToHalf(head[i]) }
                    kernels.attendHalfCacheVectorPath(
                        query: query, keys: keys + kvOffset, values: values + kvOffset, stride: c.kvDimensions,
                        count: start + b + 1, dimensions: hd, scale: c.attentionScale, scratch: accumulator,
                        out: attention + b * c.queryDimensions + h * hd)
                }
            }
            return
        }
        // Large batches: llama.cpp's tiled path (see Kernels/Attention.swift) over keys and values converted to
        // float once per layer: keys transposed (dimension-major), values as they are.
        let positions = start + n
        let keyStride = tiledKeyStride(contextLength: contextLength)
        let keysFloat = self.keysFloat
        let valuesFloat = self.valuesFloat
        let weights = self.weights
        parallelChunks(positions, threads: threads) { rows in
            for t in rows {
                let key = keys + t * c.kvDimensions
                for i in 0..<c.kvDimensions { keysFloat[i * keyStride + t] = halfToFloatTable[Int(key[i])] }
            }
            let first = rows.lowerBound * c.kvDimensions
            kernels.halvesToFloats(values + first, valuesFloat + first, count: rows.count * c.kvDimensions)
        }
        let items = n * c.heads
        parallelChunksIndexed(workers, threads: workers) { worker, _ in
            for item in Swift.stride(from: worker, to: items, by: workers) {  // round-robin, as above
                let b = item / c.heads
                let h = item % c.heads
                let kvOffset = (h / group) * hd
                kernels.attendFloatCacheTiled(
                    query: q + b * c.queryDimensions + h * hd, keysTransposed: keysFloat + kvOffset * keyStride,
                    keyStride: keyStride, values: valuesFloat + kvOffset, valueStride: c.kvDimensions,
                    count: start + b + 1, dimensions: hd, scale: c.attentionScale,
                    weights: weights + worker * attentionTileSize, out: attention + b * c.queryDimensions + h * hd)
            }
        }
    }
}
