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
    let weights: DecoderWeights
    let layers: [LlamaLayer]

    public var architecture: String { "llama" }
    public var vocabularySize: Int { configuration.vocabularySize }
    public var trainingContextLength: Int { configuration.trainingContextLength }
    public var kvBytesPerPosition: Int { configuration.layers * configuration.kvDimensions * 2 * 2 }

    /// The model in `file`; `repackWeights` as for `DecoderWeights`.
    public init(file: GGUFFile, repackWeights: Bool = true) throws {
        self.file = file
        var c = try LlamaConfiguration(file: file)
        let dim = c.embedding
        weights = try DecoderWeights(
            file: file, vocabularySize: c.vocabularySize, embedding: dim, normEpsilon: c.normEpsilon,
            repackWeights: repackWeights)
        if let factors = try TensorLoader(file: file).optionalVector("rope_freqs.weight", count: c.rope.dimensions / 2)
        {
            c.rope.frequencyFactors = Array(UnsafeBufferPointer(start: factors, count: c.rope.dimensions / 2))
        }
        configuration = c
        layers = try (0..<c.layers).map { [weights] i in
            let t = weights.block(i, file: file, normEpsilon: c.normEpsilon)
            return LlamaLayer(
                attentionNorm: try t.norm("attn_norm", count: dim),
                query: try t.projection("attn_q", rows: c.queryDimensions, columns: dim),
                key: try t.projection("attn_k", rows: c.kvDimensions, columns: dim),
                value: try t.projection("attn_v", rows: c.kvDimensions, columns: dim),
                output: try t.projection("attn_output", rows: dim, columns: c.queryDimensions),
                feedForwardNorm: try t.norm("ffn_norm", count: dim),
                feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: dim))
        }
    }

    public func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws
        -> any ModelRunner
    {
        let c = configuration
        let shape = DecoderShape(
            layers: c.layers, embedding: c.embedding, feedForward: c.feedForward, heads: c.heads, kvHeads: c.kvHeads,
            headDimension: c.headDimension, vocabularySize: c.vocabularySize, attentionScale: c.attentionScale,
            activation: .silu)
        return try LlamaRunner(
            model: self,
            state: DecoderState(
                shape, contextLength: contextLength, batchSize: batchSize, threads: threads, options: options))
    }
}

/// One session's llama state: the decoder's buffers and blocks, and RoPE.
final class LlamaRunner: DecoderRunner {
    let model: LlamaModel
    let state: DecoderState
    private let rope: RotaryEmbedding

    init(model: LlamaModel, state: DecoderState) throws {
        self.model = model
        self.state = state
        rope = try state.rotaryEmbedding(model.configuration.rope)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, pass: PassSequences, outputs: Range<Int>,
        logits: UnsafeMutablePointer<Float>, tiledAttention: Bool
    ) {
        let c = model.configuration
        let s = state
        let (x, xb, q, k, v, attended) = (s.x, s.xb, s.q, s.k, s.v, s.attended)
        let dim = c.embedding
        var n = tokens.count

        s.embed(tokens, from: model.weights.tokenEmbedding)
        rope.prepare(pass, count: n)

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            // Attention block: x += Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x)).
            s.forRows(n) { r in s.normalize(x, with: layer.attentionNorm, into: xb, rows: r) }
            s.projector.projectGroup((layer.query, q), (layer.key, k), (layer.value, v), xb, rows: n)
            s.forRows(n) { r in
                for b in r {
                    rope.apply(q + b * c.queryDimensions, heads: c.heads, row: b)
                    rope.apply(k + b * c.kvDimensions, heads: c.kvHeads, row: b)
                }
            }
            s.storeAndAttend(q, k, v, layer: l, pass: pass, rows: n, tiled: tiledAttention, into: attended)
            if l == c.layers - 1 && !s.keepOutputRows(&outputRows, rows: &n) { return }
            s.projector.project(layer.output, attended, rows: n, into: xb)
            // ... and the feed-forward block's input norm(x), row by row.
            s.forRows(n) { r in
                s.addToResidual(xb, rows: r)
                s.normalize(x, with: layer.feedForwardNorm, into: xb, rows: r)
            }

            // Feed-forward block: x += Wdown · (silu(Wgate · norm(x)) ⊙ Wup · norm(x)).
            s.feedForward.apply(layer.feedForward, xb, rows: n, into: xb)
            s.forRows(n) { r in s.addToResidual(xb, rows: r) }
        }
        s.logits(outputRows, norm: model.weights.outputNorm, output: model.weights.output, into: logits)
    }
}
