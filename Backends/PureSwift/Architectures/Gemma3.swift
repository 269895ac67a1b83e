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
public struct Gemma3Configuration: DecoderConfiguration, Sendable, Equatable {
    public var dimensions: DecoderDimensions
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

    /// Reads the configuration of `file` (whose `general.architecture` is `gemma3`).
    public init(file: GGUFFile) throws {
        let hp = HyperparameterReader(file: file, architecture: "gemma3")
        dimensions = try hp.decoderDimensions()
        let (layers, embedding, heads, headDimension) = (
            dimensions.layers, dimensions.embedding, dimensions.heads, dimensions.headDimension
        )
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
    }
}

/// The Gemma 3 architecture: per-head query and key norms, norms after attention and feed-forward, GELU.
enum Gemma3: DecoderArchitecture {
    static let name = "gemma3"

    /// One Gemma 3 block's weights (memory-mapped).
    struct Layer {
        let attention: AttentionWeights
        let queryNorm: RMSNorm
        let keyNorm: RMSNorm
        let attentionPostNorm: RMSNorm
        let feedForwardNorm: RMSNorm
        let feedForward: FeedForwardWeights
        let feedForwardPostNorm: RMSNorm
    }

    static func configuration(_ file: GGUFFile) throws -> Gemma3Configuration { try Gemma3Configuration(file: file) }

    static func layer(_ t: BlockTensors, _ c: Gemma3Configuration) throws -> Layer {
        let dim = c.embedding
        return Layer(
            attention: try t.attention(c.dimensions),
            queryNorm: try t.norm("attn_q_norm", count: c.headDimension),
            keyNorm: try t.norm("attn_k_norm", count: c.headDimension),
            attentionPostNorm: try t.norm("post_attention_norm", count: dim),
            feedForwardNorm: try t.norm("ffn_norm", count: dim),
            feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: dim),
            feedForwardPostNorm: try t.norm("post_ffw_norm", count: dim))
    }

    /// The queries carry the scale (llama.cpp scales Q, then attends with scale 1).
    static func shape(_ c: Gemma3Configuration) -> DecoderShape {
        DecoderShape(dimensions: c.dimensions, attentionScale: 1, activation: .gelu)
    }

    static func runner(_ model: Decoder<Gemma3>, state: DecoderState) throws -> Gemma3Runner {
        try Gemma3Runner(model: model, state: state)
    }
}

/// One session's Gemma 3 state: the decoder's buffers and blocks, and the global and local RoPE.
final class Gemma3Runner: DecoderRunner {
    let model: Decoder<Gemma3>
    let state: DecoderState
    private let rope: RotaryEmbedding
    private let localRoPE: RotaryEmbedding

    init(model: Decoder<Gemma3>, state: DecoderState) throws {
        self.model = model
        self.state = state
        rope = try state.rotaryEmbedding(model.configuration.rope)
        localRoPE = try state.rotaryEmbedding(model.configuration.localRoPE)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, pass: PassSequences, outputs: Range<Int>,
        logits: UnsafeMutablePointer<Float>, tiledAttention: Bool
    ) {
        let c = model.configuration
        let d = c.dimensions
        let s = state
        let (x, xb, q, k, v, attended) = (s.x, s.xb, s.q, s.k, s.v, s.attended)
        let dim = d.embedding
        let hd = d.headDimension
        var n = tokens.count

        s.embed(tokens, from: model.weights.tokenEmbedding, scale: Float(dim).squareRoot())
        rope.prepare(pass, count: n)
        localRoPE.prepare(pass, count: n)
        let global = AttentionMask()
        let local = AttentionMask(window: c.slidingWindow)

        var outputRows = outputs
        for (l, layer) in model.layers.enumerated() {
            let positions = c.isLocalLayer[l] ? localRoPE : rope
            // Attention block: x += postnorm(Wo · attention(q, k, v)).
            s.projectAttentionInput(layer.attention, rows: n)
            s.forRows(n) { r in
                let (qr, kr) = (q + r.lowerBound * d.queryDimensions, k + r.lowerBound * d.kvDimensions)
                layer.queryNorm.apply(qr, into: qr, rows: r.count * d.heads, width: hd)
                layer.keyNorm.apply(kr, into: kr, rows: r.count * d.kvHeads, width: hd)
                for b in r {
                    positions.apply(q + b * d.queryDimensions, heads: d.heads, row: b)
                    positions.apply(k + b * d.kvDimensions, heads: d.kvHeads, row: b)
                }
                for i in 0..<r.count * d.queryDimensions { qr[i] *= c.queryScale }
            }
            s.storeAndAttend(
                q, k, v, layer: l, pass: pass, rows: n, tiled: tiledAttention,
                mask: c.isLocalLayer[l] ? local : global, into: attended)
            if l == d.layers - 1 && !s.keepOutputRows(&outputRows, rows: &n) { return }
            s.projector.project(layer.attention.output, attended, rows: n, into: xb)
            // ... and the feed-forward block's input norm(x), row by row.
            s.forRows(n) { r in
                s.normalize(xb, with: layer.attentionPostNorm, into: xb, rows: r)
                s.addToResidual(xb, rows: r)
                s.normalize(x, with: layer.feedForwardNorm, into: xb, rows: r)
            }

            // Feed-forward block: x += postnorm'(Wdown · (gelu(Wgate · norm(x)) ⊙ Wup · norm(x))).
            s.feedForward.apply(layer.feedForward, xb, rows: n, into: xb)
            s.forRows(n) { r in
                s.normalize(xb, with: layer.feedForwardPostNorm, into: xb, rows: r)
                s.addToResidual(xb, rows: r)
            }
        }
        s.logits(outputRows, norm: model.weights.outputNorm, output: model.weights.output, into: logits)
        let cap = c.finalLogitSoftCap
        if cap != 0 {
            for i in 0..<outputRows.count * d.vocabularySize { logits[i] = cap * tanhf(logits[i] * (1 / cap)) }
        }
    }
}
