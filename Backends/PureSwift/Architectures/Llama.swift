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
        let shape = try hp.attentionShape(embedding: embedding)
        (heads, kvHeads, headDimension) = (shape.heads, shape.kvHeads, shape.headDimension)
        trainingContextLength = try hp.int("context_length")
        normEpsilon = try hp.float("attention.layer_norm_rms_epsilon")
        let experts = try hp.int("expert_count", default: 1)
        if file.metadata[hp.key("expert_count")] != nil && experts > 1 {
            throw PureSwiftError.unsupportedFeature(path: file.path, feature: "mixture of experts (\(experts) experts)")
        }
        // "Normal" pairs: the GGUF converter permuted Wq/Wk for them.
        rope = try hp.rope(mode: .normal, headDimension: headDimension)
        let scale = try hp.float("attention.scale", default: 0)
        attentionScale = scale == 0 ? 1 / Float(headDimension).squareRoot() : scale
        vocabularySize = try hp.vocabularySize()
    }
}

/// One transformer block's weights (memory-mapped).
struct LlamaLayer {
    let attentionNorm: RMSNorm
    let query: Projection
    let key: Projection
    let value: Projection
    let output: Projection
    let feedForwardNorm: RMSNorm
    let feedForward: FeedForwardWeights
}

/// A llama-architecture model: configuration plus weights read in place from the GGUF file.
// @unchecked Sendable: weights read-only after load; runners own their buffers
public final class LlamaModel: LanguageModel, @unchecked Sendable {
    public let file: GGUFFile
    public let configuration: LlamaConfiguration
    let tokenEmbedding: WeightMatrix
    let outputNorm: RMSNorm
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
        outputNorm = RMSNorm(weight: try t.vector("output_norm.weight", count: dim), epsilon: c.normEpsilon)
        // A tied output matrix stays as it is: embedding lookups read the same bytes.
        output =
            file.tensor(named: "output.weight") != nil
            ? try packed.prepare(t.matrix("output.weight", rows: c.vocabularySize, columns: dim)) : tokenEmbedding
        if let factors = try t.optionalVector("rope_freqs.weight", count: c.rope.dimensions / 2) {
            c.rope.frequencyFactors = Array(UnsafeBufferPointer(start: factors, count: c.rope.dimensions / 2))
        }
        configuration = c
        layers = try (0..<c.layers).map { i in
            let p = "blk.\(i)."
            func norm(_ name: String) throws -> RMSNorm {
                RMSNorm(weight: try t.vector(p + name + ".weight", count: dim), epsilon: c.normEpsilon)
            }
            func projection(_ name: String, _ rows: Int, _ columns: Int) throws -> Projection {
                try t.projection(p + name, rows: rows, columns: columns, packed: packed)
            }
            return LlamaLayer(
                attentionNorm: try norm("attn_norm"),
                query: try projection("attn_q", c.queryDimensions, dim),
                key: try projection("attn_k", c.kvDimensions, dim),
                value: try projection("attn_v", c.kvDimensions, dim),
                output: try projection("attn_output", dim, c.queryDimensions),
                feedForwardNorm: try norm("ffn_norm"),
                feedForward: FeedForwardWeights(
                    gate: try projection("ffn_gate", c.feedForward, dim),
                    up: try projection("ffn_up", c.feedForward, dim),
                    down: try projection("ffn_down", dim, c.feedForward)))
        }
    }

    public func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws
        -> any ModelRunner
    {
        try LlamaRunner(
            model: self, contextLength: contextLength, batchSize: batchSize, threads: threads,
            kernels: options.kernels, batchedProducts: options.batchedProducts)
    }
}

/// One session's llama state: the decoder's buffers and blocks, and RoPE.
final class LlamaRunner: DecoderRunner {
    let model: LlamaModel
    let state: DecoderState
    private let rope: RotaryEmbedding

    init(
        model: LlamaModel, contextLength: Int, batchSize: Int, threads: Int,
        kernels: any KernelSet, batchedProducts: (any BatchedProducts)?
    ) throws {
        self.model = model
        let c = model.configuration
        state = try DecoderState(
            DecoderShape(
                layers: c.layers, embedding: c.embedding, feedForward: c.feedForward, heads: c.heads,
                kvHeads: c.kvHeads, headDimension: c.headDimension, vocabularySize: c.vocabularySize,
                attentionScale: c.attentionScale, activation: .silu),
            contextLength: contextLength, batchSize: batchSize, threads: threads, kernels: kernels,
            batchedProducts: batchedProducts)
        rope = try RotaryEmbedding(c.rope, batch: state.microBatch, kernels: kernels, scratch: state.scratch)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>,
        tiledAttention: Bool
    ) {
        let c = model.configuration
        let s = state
        let (x, xb, q, k, v, attended) = (s.x, s.xb, s.q, s.k, s.v, s.attended)
        let dim = c.embedding
        var n = tokens.count
        let start = s.cache.count

        s.embed(tokens, from: model.tokenEmbedding)
        rope.prepare(start: start, count: n)

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            // Attention block: x += Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x)).
            layer.attentionNorm.apply(x, into: xb, rows: n, width: dim)
            s.projector.projectGroup((layer.query, q), (layer.key, k), (layer.value, v), xb, rows: n)
            for b in 0..<n {
                rope.apply(q + b * c.queryDimensions, heads: c.heads, row: b)
                rope.apply(k + b * c.kvDimensions, heads: c.kvHeads, row: b)
            }
            s.cache.store(keys: k, values: v, layer: l, position: start, count: n)
            s.attention.attend(q, cache: s.cache, layer: l, tokens: n, start: start, tiled: tiledAttention, into: attended)
            if l == c.layers - 1 && !s.keepOutputRows(&outputRows, rows: &n) { return }
            s.projector.project(layer.output, attended, rows: n, into: xb)
            addResidual(xb, to: x, count: n * dim)

            // Feed-forward block: x += Wdown · (silu(Wgate · norm(x)) ⊙ Wup · norm(x)).
            layer.feedForwardNorm.apply(x, into: xb, rows: n, width: dim)
            s.feedForward.apply(layer.feedForward, xb, rows: n, into: xb)
            addResidual(xb, to: x, count: n * dim)
        }
        s.logits(outputRows, norm: model.outputNorm, output: model.output, into: logits)
    }
}
