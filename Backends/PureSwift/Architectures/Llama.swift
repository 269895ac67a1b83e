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
public struct LlamaConfiguration: DecoderConfiguration, Sendable, Equatable {
    public var dimensions: DecoderDimensions
    public var attentionScale: Float
    public var rope: RoPEConfiguration

    /// Reads the configuration of `file` (whose `general.architecture` is `architecture`).
    public init(file: GGUFFile, architecture: String = "llama") throws {
        let hp = HyperparameterReader(file: file, architecture: architecture)
        dimensions = try hp.decoderDimensions()
        let experts = try hp.int("expert_count", default: 1)
        if file.metadata[hp.key("expert_count")] != nil && experts > 1 {
            throw PureSwiftError.unsupportedFeature(path: file.path, feature: "mixture of experts (\(experts) experts)")
        }
        // "Normal" pairs: the GGUF converter permuted Wq/Wk for them.
        rope = try hp.rope(mode: .normal, headDimension: dimensions.headDimension)
        let scale = try hp.float("attention.scale", default: 0)
        attentionScale = scale == 0 ? 1 / Float(dimensions.headDimension).squareRoot() : scale
    }
}

/// The llama architecture: one block's weights, the RoPE frequency factors some files carry, SiLU.
enum Llama: DecoderArchitecture {
    static let name = "llama"

    /// One transformer block's weights (memory-mapped).
    struct Layer {
        let attention: AttentionWeights
        let feedForwardNorm: RMSNorm
        let feedForward: FeedForwardWeights
    }

    static func configuration(_ file: GGUFFile) throws -> LlamaConfiguration {
        var c = try LlamaConfiguration(file: file)
        let count = c.rope.dimensions / 2
        if let factors = try TensorLoader(file: file).optionalVector("rope_freqs.weight", count: count) {
            c.rope.frequencyFactors = Array(UnsafeBufferPointer(start: factors, count: count))
        }
        return c
    }

    static func layer(_ t: BlockTensors, _ c: LlamaConfiguration) throws -> Layer {
        Layer(
            attention: try t.attention(c.dimensions), feedForwardNorm: try t.norm("ffn_norm", count: c.embedding),
            feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: c.embedding))
    }

    static func shape(_ c: LlamaConfiguration) -> DecoderShape {
        DecoderShape(dimensions: c.dimensions, attentionScale: c.attentionScale, activation: .silu)
    }

    static func runner(_ model: Decoder<Llama>, state: DecoderState) throws -> LlamaRunner {
        try LlamaRunner(model: model, state: state)
    }
}

/// One session's llama state: the decoder's buffers and blocks, and RoPE.
final class LlamaRunner: DecoderRunner {
    let model: Decoder<Llama>
    let state: DecoderState
    private let rope: RotaryEmbedding

    init(model: Decoder<Llama>, state: DecoderState) throws {
        self.model = model
        self.state = state
        rope = try state.rotaryEmbedding(model.configuration.rope)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, pass: PassSequences, outputs: Range<Int>,
        logits: UnsafeMutablePointer<Float>, tiledAttention: Bool
    ) {
        let d = model.configuration.dimensions
        let s = state
        let (x, xb, q, k, v, attended) = (s.x, s.xb, s.q, s.k, s.v, s.attended)
        var n = tokens.count

        s.embed(tokens, from: model.weights.tokenEmbedding)
        rope.prepare(pass, count: n)

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            // Attention block: x += Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x)).
            s.projectAttentionInput(layer.attention, rows: n)
            s.forRows(n) { r in
                for b in r {
                    rope.apply(q + b * d.queryDimensions, heads: d.heads, row: b)
                    rope.apply(k + b * d.kvDimensions, heads: d.kvHeads, row: b)
                }
            }
            s.storeAndAttend(q, k, v, layer: l, pass: pass, rows: n, tiled: tiledAttention, into: attended)
            // Wo multiplies every row before the output rows are kept, as in llama.cpp (build_attn, then
            // inp_out_ids): its products round by the batch for some weight types.
            s.projector.project(layer.attention.output, attended, rows: n, into: xb)
            if l == d.layers - 1 && !s.keepOutputRows(&outputRows, rows: &n, projected: true) { return }
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
