import Foundation
import GGUF
import PureSwiftKernels

// The gemma3 architecture (Gemma 3 text models), as llama.cpp's src/models/gemma3.cpp builds it:
//
//   x = token_embd[token] · √embedding
//   per layer:  q, k, v = Wq · norm(x), Wk · norm(x), Wv · norm(x)
//               q = rope(qnorm(q)) · scale,  k = rope(knorm(k))        (RMSNorm per head, NeoX RoPE)
//               h = x + postnorm(Wo · attention(q, k, v))
//               x = h + postnorm'(Wdown · (gelu(Wgate · norm(h)) ⊙ Wup · norm(h)))
//   logits = token_embd · norm(x)       (tied; output.weight when the file has one; soft-capped when it says so)
//
// Layers alternate in a pattern of `sliding_window_pattern` (6): all but the last of each group attend only to the
// last `sliding_window` positions and rotate with their own base (`rope.freq_base_swa`, 10 000); the last attends
// to everything with the model's base (`rope.freq_base`, and its linear scaling if any).

/// Hyperparameters of a Gemma 3 model, read from the model's own `gemma3.*` keys.
public struct Gemma3Configuration: Sendable, Equatable {
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
    /// Multiplies the queries before attention (1/√headDimension; 1/√(embedding/heads) for the 27B model).
    public var queryScale: Float
    /// RoPE of the global layers.
    public var rope: RoPEConfiguration
    /// RoPE of the sliding-window layers.
    public var localRoPE: RoPEConfiguration
    /// Positions a sliding-window layer sees (nil: every layer is global).
    public var slidingWindow: Int?
    /// Whether layer i attends through the sliding window.
    public var isLocalLayer: [Bool]
    /// Final logit soft-capping (0: none).
    public var finalLogitSoftCap: Float

    public var queryDimensions: Int { heads * headDimension }
    public var kvDimensions: Int { kvHeads * headDimension }

    /// Reads the configuration of `file` (whose `general.architecture` is `gemma3`).
    public init(file: GGUFFile) throws {
        let hp = HyperparameterReader(file: file, architecture: "gemma3")
        layers = try hp.int("block_count")
        embedding = try hp.int("embedding_length")
        feedForward = try hp.int("feed_forward_length")
        let shape = try hp.attentionShape(embedding: embedding)
        (heads, kvHeads, headDimension) = (shape.heads, shape.kvHeads, shape.headDimension)
        trainingContextLength = try hp.int("context_length")
        normEpsilon = try hp.float("attention.layer_norm_rms_epsilon")
        rope = try hp.rope(mode: .neox, headDimension: headDimension)
        localRoPE = RoPEConfiguration(
            mode: .neox, dimensions: headDimension, frequencyBase: try hp.float("rope.freq_base_swa", default: 10_000))
        if file.metadata[hp.key("attention.sliding_window")] != nil {
            let window = try hp.int("attention.sliding_window")
            let pattern = try hp.int("attention.sliding_window_pattern", default: 6)
            slidingWindow = window
            isLocalLayer = (0..<layers).map { $0 % pattern < pattern - 1 }
        } else {
            slidingWindow = nil
            isLocalLayer = Array(repeating: false, count: layers)
        }
        // llama.cpp: the 27B model (62 layers) scales by the embedding per head, the others by the head size.
        queryScale = 1 / Float(layers == 62 ? embedding / heads : headDimension).squareRoot()
        finalLogitSoftCap = try hp.float("final_logit_softcapping", default: 0)
        vocabularySize = try hp.vocabularySize()
    }
}

/// One Gemma 3 block's weights (memory-mapped).
struct Gemma3Layer {
    let attentionNorm: RMSNorm
    let query: Projection
    let key: Projection
    let value: Projection
    let queryNorm: RMSNorm
    let keyNorm: RMSNorm
    let output: Projection
    let attentionPostNorm: RMSNorm
    let feedForwardNorm: RMSNorm
    let feedForward: FeedForwardWeights
    let feedForwardPostNorm: RMSNorm
}

/// A Gemma 3 model: configuration plus weights read in place from the GGUF file.
// @unchecked Sendable: weights read-only after load; runners own their buffers
public final class Gemma3Model: LanguageModel, @unchecked Sendable {
    public let file: GGUFFile
    public let configuration: Gemma3Configuration
    let tokenEmbedding: WeightMatrix
    let outputNorm: RMSNorm
    let output: WeightMatrix
    let layers: [Gemma3Layer]
    /// Owner of any matrices regrouped for the kernels.
    let repacked: RepackedWeights

    public var architecture: String { "gemma3" }
    public var vocabularySize: Int { configuration.vocabularySize }
    public var trainingContextLength: Int { configuration.trainingContextLength }
    public var kvBytesPerPosition: Int { configuration.layers * configuration.kvDimensions * 2 * 2 }

    /// The model in `file`; `repackWeights` as for `LlamaModel`.
    public init(file: GGUFFile, repackWeights: Bool = true) throws {
        self.file = file
        let c = try Gemma3Configuration(file: file)
        configuration = c
        let t = TensorLoader(file: file)
        let packed = RepackedWeights(file: file, enabled: repackWeights)
        repacked = packed
        let dim = c.embedding
        tokenEmbedding = try t.matrix("token_embd.weight", rows: c.vocabularySize, columns: dim)
        outputNorm = RMSNorm(weight: try t.vector("output_norm.weight", count: dim), epsilon: c.normEpsilon)
        output =
            file.tensor(named: "output.weight") != nil
            ? try packed.prepare(t.matrix("output.weight", rows: c.vocabularySize, columns: dim)) : tokenEmbedding
        layers = try (0..<c.layers).map { i in
            let p = "blk.\(i)."
            func norm(_ name: String, _ count: Int = dim) throws -> RMSNorm {
                RMSNorm(weight: try t.vector(p + name + ".weight", count: count), epsilon: c.normEpsilon)
            }
            func projection(_ name: String, _ rows: Int, _ columns: Int) throws -> Projection {
                try t.projection(p + name, rows: rows, columns: columns, packed: packed)
            }
            return Gemma3Layer(
                attentionNorm: try norm("attn_norm"),
                query: try projection("attn_q", c.queryDimensions, dim),
                key: try projection("attn_k", c.kvDimensions, dim),
                value: try projection("attn_v", c.kvDimensions, dim),
                queryNorm: try norm("attn_q_norm", c.headDimension),
                keyNorm: try norm("attn_k_norm", c.headDimension),
                output: try projection("attn_output", dim, c.queryDimensions),
                attentionPostNorm: try norm("post_attention_norm"),
                feedForwardNorm: try norm("ffn_norm"),
                feedForward: FeedForwardWeights(
                    gate: try projection("ffn_gate", c.feedForward, dim),
                    up: try projection("ffn_up", c.feedForward, dim),
                    down: try projection("ffn_down", dim, c.feedForward)),
                feedForwardPostNorm: try norm("post_ffw_norm"))
        }
    }

    public func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws
        -> any ModelRunner
    {
        try Gemma3Runner(
            model: self, contextLength: contextLength, batchSize: batchSize, threads: threads,
            kernels: options.kernels, batchedProducts: options.batchedProducts)
    }
}

/// One session's Gemma 3 state: KV cache and scratch buffers, all allocated up front.
final class Gemma3Runner: ModelRunner {
    let model: Gemma3Model
    let cache: KVCache
    let contextLength: Int
    let batchSize: Int
    /// Tokens run through the layers together (`MicroBatches`).
    let microBatch: Int
    var position: Int { cache.count }
    var vocabularySize: Int { model.vocabularySize }

    private let scratch = ScratchBuffers()
    private let projector: Projector
    private let rope: RotaryEmbedding
    private let localRoPE: RotaryEmbedding
    private let attention: SelfAttention
    private let feedForward: FeedForward
    private let x: UnsafeMutablePointer<Float>  // (batch, embedding) residual stream
    private let xb: UnsafeMutablePointer<Float>  // (batch, embedding) normed input / block output
    private let q: UnsafeMutablePointer<Float>  // (batch, heads · headDimension)
    private let k: UnsafeMutablePointer<Float>  // (batch, kvHeads · headDimension)
    private let v: UnsafeMutablePointer<Float>  // (batch, kvHeads · headDimension)
    private let attended: UnsafeMutablePointer<Float>  // (batch, heads · headDimension) attention output

    init(
        model: Gemma3Model, contextLength: Int, batchSize: Int, threads: Int,
        kernels: any KernelSet, batchedProducts: (any BatchedProducts)?
    ) throws {
        self.model = model
        let c = model.configuration
        self.contextLength = contextLength
        self.batchSize = max(1, batchSize)
        let b = MicroBatches.size(batchSize: batchSize, batchedProducts: batchedProducts)
        microBatch = b
        cache = try KVCache(layers: c.layers, capacity: contextLength, kvDimensions: c.kvDimensions)
        projector = Projector(
            rows: b, columns: max(c.embedding, c.queryDimensions, c.feedForward), threads: threads, kernels: kernels,
            batchedProducts: batchedProducts)
        rope = try RotaryEmbedding(c.rope, batch: b, kernels: kernels, scratch: scratch)
        localRoPE = try RotaryEmbedding(c.localRoPE, batch: b, kernels: kernels, scratch: scratch)
        // The queries carry the scale (llama.cpp scales Q, then attends with scale 1).
        attention = try SelfAttention(
            heads: c.heads, kvHeads: c.kvHeads, headDimension: c.headDimension, scale: 1,
            contextLength: contextLength, threads: threads, kernels: kernels, scratch: scratch)
        feedForward = try FeedForward(
            activation: .gelu, width: c.feedForward, batch: b, projector: projector, scratch: scratch)
        x = try scratch.floats(b * c.embedding)
        xb = try scratch.floats(b * c.embedding)
        q = try scratch.floats(b * c.queryDimensions)
        k = try scratch.floats(b * c.kvDimensions)
        v = try scratch.floats(b * c.kvDimensions)
        attended = try scratch.floats(b * c.queryDimensions)
    }

    func reset() { cache.count = 0 }

    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>) {
        precondition(tokens.count <= batchSize && cache.count + tokens.count <= contextLength, "batch does not fit")
        MicroBatches.run(
            tokens, outputs: outputs, logits: logits, size: microBatch, vocabularySize: vocabularySize
        ) { self.evaluate($0, outputs: $1, logits: $2, tiledAttention: $3) }
    }

    /// The forward pass of at most `microBatch` tokens, with attention on llama.cpp's tiled path or its vector path.
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

        let embeddingScale = Float(dim).squareRoot()
        for b in 0..<n {
            model.tokenEmbedding.dequantizeRow(Int(tokens[b]), into: x + b * dim)
            for i in 0..<dim { x[b * dim + i] *= embeddingScale }
        }
        rope.prepare(start: start, count: n)
        localRoPE.prepare(start: start, count: n)
        let global = AttentionMask()
        let local = AttentionMask(window: c.slidingWindow)

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            let isLocal = c.isLocalLayer[l]
            // Attention block: x += postnorm(Wo · attention(q, k, v)).
            layer.attentionNorm.apply(x, into: xb, rows: n, width: dim)
            projector.projectGroup((layer.query, q), (layer.key, k), (layer.value, v), xb, rows: n)
            layer.queryNorm.apply(q, into: q, rows: n * c.heads, width: hd)
            layer.keyNorm.apply(k, into: k, rows: n * c.kvHeads, width: hd)
            for b in 0..<n {
                (isLocal ? localRoPE : rope).apply(q + b * c.queryDimensions, heads: c.heads, row: b)
                (isLocal ? localRoPE : rope).apply(k + b * c.kvDimensions, heads: c.kvHeads, row: b)
            }
            for i in 0..<n * c.queryDimensions { q[i] *= c.queryScale }
            cache.store(keys: k, values: v, layer: l, position: start, count: n)
            attention.attend(
                q, cache: cache, layer: l, tokens: n, start: start, tiled: tiledAttention,
                mask: isLocal ? local : global, into: attended)

            // After the last layer's attention only the rows whose logits are wanted matter.
            if l == c.layers - 1 && outputRows != 0..<n {
                MicroBatches.keep(outputRows, of: attended, width: c.queryDimensions)
                MicroBatches.keep(outputRows, of: x, width: dim)
                n = outputRows.count
                outputRows = 0..<n
                if n == 0 { break }
            }
            projector.project(layer.output, attended, rows: n, into: xb)
            layer.attentionPostNorm.apply(xb, into: xb, rows: n, width: dim)
            addResidual(xb, to: x, count: n * dim)

            // Feed-forward block: x += postnorm'(Wdown · (gelu(Wgate · norm(x)) ⊙ Wup · norm(x))).
            layer.feedForwardNorm.apply(x, into: xb, rows: n, width: dim)
            feedForward.apply(layer.feedForward, xb, rows: n, into: xb)
            layer.feedForwardPostNorm.apply(xb, into: xb, rows: n, width: dim)
            addResidual(xb, to: x, count: n * dim)
        }
        cache.count = start + tokens.count

        guard !outputRows.isEmpty else { return }
        model.outputNorm.apply(x + outputRows.lowerBound * dim, into: xb, rows: outputRows.count, width: dim)
        projector.logits(model.output, xb, rows: outputRows.count, into: logits)
        let cap = c.finalLogitSoftCap
        if cap != 0 {
            for i in 0..<outputRows.count * c.vocabularySize { logits[i] = cap * tanhf(logits[i] * (1 / cap)) }
        }
    }
}
