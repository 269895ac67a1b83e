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

/// Hyperparameters of a Gemma 3 (or Gemma 2, `Gemma2.swift`) model, read from the model's own keys.
public struct Gemma3Configuration: DecoderConfiguration, Sendable, Equatable {
    public var dimensions: DecoderDimensions
    /// Multiplies the queries before attention (1/√headDimension; 1/√(embedding/heads) for the 27B models).
    public var queryScale: Float
    /// RoPE of the global layers.
    public var rope: RoPEConfiguration
    /// RoPE of the sliding-window layers.
    public var localRoPE: RoPEConfiguration
    /// Positions a sliding-window layer sees (nil: every layer is global).
    public var slidingWindow: Int?
    /// Whether layer i attends through the sliding window.
    public var isLocalLayer: [Bool]
    /// Soft-capping of the attention scores (0: none; Gemma 2: `attn_logit_softcapping`, 50 by default).
    public var attentionSoftCap: Float = 0
    /// Final logit soft-capping (0: none).
    public var finalLogitSoftCap: Float

    /// Reads the configuration of `file`, a Gemma 3 model (`gemma3.*` keys) or with `gemma2` a Gemma 2 model
    /// (`gemma2.*`), with llama.cpp's defaults for each: Gemma 2 always has sliding-window layers (4096 positions,
    /// every other layer), its local layers rotate with the model's own base and scale unless
    /// `rope.freq_base_swa` says otherwise, and it soft-caps the attention scores (50) and the logits (30).
    public init(file: GGUFFile, gemma2: Bool = false) throws {
        let hp = HyperparameterReader(file: file, architecture: gemma2 ? "gemma2" : "gemma3")
        dimensions = try hp.decoderDimensions()
        let (layers, embedding, heads, headDimension) = (
            dimensions.layers, dimensions.embedding, dimensions.heads, dimensions.headDimension
        )
        rope = try hp.rope(mode: .neox, headDimension: headDimension)
        localRoPE = rope
        localRoPE.frequencyBase = try hp.float("rope.freq_base_swa", default: gemma2 ? rope.frequencyBase : 10_000)
        if !gemma2 { localRoPE.frequencyScale = 1 }
        if gemma2 || file.metadata[hp.key("attention.sliding_window")] != nil {
            let window = try hp.int("attention.sliding_window", default: 4096)
            let pattern = try hp.int("attention.sliding_window_pattern", default: gemma2 ? 2 : 6)
            slidingWindow = window
            isLocalLayer = (0..<layers).map { $0 % pattern < pattern - 1 }
        } else {
            slidingWindow = nil
            isLocalLayer = Array(repeating: false, count: layers)
        }
        // llama.cpp: the 27B models (Gemma 2: 46 layers, Gemma 3: 62) scale by the embedding per head, the others
        // by the head size.
        queryScale = 1 / Float(layers == (gemma2 ? 46 : 62) ? embedding / heads : headDimension).squareRoot()
        if gemma2 { attentionSoftCap = try hp.float("attn_logit_softcapping", default: 50) }
        finalLogitSoftCap = try hp.float("final_logit_softcapping", default: gemma2 ? 30 : 0)
    }
}

/// One Gemma block's weights (memory-mapped): Gemma 3's per-head query and key norms (nil for Gemma 2), norms
/// before and after attention and feed-forward, GEGLU.
struct GemmaLayer {
    let attention: AttentionWeights
    var queryNorm: RMSNorm? = nil
    var keyNorm: RMSNorm? = nil
    let attentionPostNorm: RMSNorm
    let feedForwardNorm: RMSNorm
    let feedForward: FeedForwardWeights
    let feedForwardPostNorm: RMSNorm
}

/// Gemma 2 and Gemma 3: built the same way, sharing `Gemma3Runner`.
protocol GemmaFamily: DecoderArchitecture
where Configuration == Gemma3Configuration, Layer == GemmaLayer, Runner == Gemma3Runner<Self> {}

extension GemmaFamily {
    /// The queries carry the scale (llama.cpp scales Q, then attends with scale 1).
    static func shape(_ c: Gemma3Configuration) -> DecoderShape {
        DecoderShape(
            dimensions: c.dimensions, attentionScale: 1, activation: .gelu, attentionSoftCap: c.attentionSoftCap)
    }

    static func runner(_ model: Decoder<Self>, state: DecoderState) throws -> Gemma3Runner<Self> {
        try Gemma3Runner(model: model, state: state)
    }

    /// A block's weights, with the per-head query and key norms when `queryKeyNorms`.
    static func gemmaLayer(_ t: BlockTensors, _ c: Gemma3Configuration, queryKeyNorms: Bool) throws -> GemmaLayer {
        let dim = c.embedding
        return GemmaLayer(
            attention: try t.attention(c.dimensions),
            queryNorm: queryKeyNorms ? try t.norm("attn_q_norm", count: c.headDimension) : nil,
            keyNorm: queryKeyNorms ? try t.norm("attn_k_norm", count: c.headDimension) : nil,
            attentionPostNorm: try t.norm("post_attention_norm", count: dim),
            feedForwardNorm: try t.norm("ffn_norm", count: dim),
            feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: dim),
            feedForwardPostNorm: try t.norm("post_ffw_norm", count: dim))
    }
}

/// The Gemma 3 architecture: per-head query and key norms, norms after attention and feed-forward, GELU.
enum Gemma3: GemmaFamily {
    static let name = "gemma3"

    static func configuration(_ file: GGUFFile) throws -> Gemma3Configuration { try Gemma3Configuration(file: file) }

    static func layer(_ t: BlockTensors, _ c: Gemma3Configuration) throws -> GemmaLayer {
        try gemmaLayer(t, c, queryKeyNorms: true)
    }
}

/// One session's Gemma state: the decoder's buffers and blocks, and the global and local RoPE.
final class Gemma3Runner<A: GemmaFamily>: DecoderRunner {
    let model: Decoder<A>
    let state: DecoderState
    private let rope: RotaryEmbedding
    private let localRoPE: RotaryEmbedding

    init(model: Decoder<A>, state: DecoderState) throws {
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
                s.positionQueriesAndKeys(
                    rows: r, queryNorm: layer.queryNorm, keyNorm: layer.keyNorm, rope: positions,
                    queryScale: c.queryScale)
            }
            s.storeAndAttend(
                q, k, v, layer: l, pass: pass, rows: n, tiled: tiledAttention,
                mask: c.isLocalLayer[l] ? local : global, into: attended)
            // Wo multiplies every row before the output rows are kept, as in llama.cpp (build_attn, then
            // inp_out_ids): its products round by the batch for some weight types.
            s.projector.project(layer.attention.output, attended, rows: n, into: xb)
            if l == d.layers - 1 && !s.keepOutputRows(&outputRows, rows: &n, projected: true) { return }
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
