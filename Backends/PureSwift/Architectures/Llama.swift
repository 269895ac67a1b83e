import Foundation
import GGUF
import PureSwiftKernels

// The llama architecture (Llama 1–3, SmolLM, Mistral-style dense models), as llama.cpp's src/models/llama.cpp
// builds it, and the runner of the architectures built the same way (Qwen2.swift, Qwen3.swift, Phi3.swift):
//
//   x = token_embd[token]
//   per layer:  h = x + Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x))
//               x = h + Wdown · (silu(Wgate · norm(h)) ⊙ Wup · norm(h))
//   logits = output · norm(x)        (output = token_embd when the file has no output.weight)
//
// RMSNorm everywhere, RoPE in the "normal" mode (adjacent pairs; the GGUF converter permuted Wq/Wk for it), grouped-
// query attention (heads share KV heads in groups of head_count / head_count_kv). Llama 3 files carry per-pair
// RoPE frequency divisors (`rope_freqs.weight`; the converter computes them from `rope_scaling`'s llama3 type).

/// Hyperparameters of a llama-family model (llama, qwen2, qwen3, phi3), read from the model's own
/// `<architecture>.*` keys.
public struct LlamaConfiguration: DecoderConfiguration, Sendable, Equatable {
    public var dimensions: DecoderDimensions
    /// Applied to the scores (1 when `queryScale` scales the queries instead).
    public var attentionScale: Float
    public var rope: RoPEConfiguration
    /// RoPE for contexts longer than `originalContextLength` (Phi-3's `rope_factors_long`), nil when the same.
    public var longRoPE: RoPEConfiguration? = nil
    /// The context the model was trained with before its RoPE scaling (`rope.scaling.original_context_length`).
    public var originalContextLength: Int
    /// Multiplies the queries after RoPE, the scores then unscaled (Phi-3), or nil.
    public var queryScale: Float? = nil

    /// Reads the configuration of `file` (whose `general.architecture` is `architecture`), RoPE pairing `ropeMode`
    /// (`partialRotation` and `scalingTypes` as for `HyperparameterReader.rope`).
    public init(
        file: GGUFFile, architecture: String = "llama", ropeMode: RoPEMode = .normal, partialRotation: Bool = false,
        scalingTypes: Set<String> = ["none", "linear"]
    ) throws {
        let hp = HyperparameterReader(file: file, architecture: architecture)
        dimensions = try hp.decoderDimensions()
        let experts = try hp.int("expert_count", default: 1)
        if file.metadata[hp.key("expert_count")] != nil && experts > 1 {
            throw PureSwiftError.unsupportedFeature(path: file.path, feature: "mixture of experts (\(experts) experts)")
        }
        if file.tensor(named: "output.bias") != nil {
            throw PureSwiftError.unsupportedFeature(path: file.path, feature: "an output bias (output.bias)")
        }
        rope = try hp.rope(
            mode: ropeMode, headDimension: dimensions.headDimension, partialRotation: partialRotation,
            scalingTypes: scalingTypes)
        let scale = try hp.float("attention.scale", default: 0)
        attentionScale = scale == 0 ? 1 / Float(dimensions.headDimension).squareRoot() : scale
        originalContextLength = try hp.int(
            "rope.scaling.original_context_length", default: dimensions.trainingContextLength)
    }

    /// The RoPE of a session of `contextLength` positions: llama.cpp's `get_rope_factors` takes the long factors
    /// when a sequence's context exceeds the original training context.
    public func rope(forContext contextLength: Int) -> RoPEConfiguration {
        if let longRoPE, contextLength > originalContextLength { return longRoPE }
        return rope
    }
}

/// One llama-family block's weights (memory-mapped): attention, optional per-head query and key norms (Qwen 3), the
/// feed-forward norm and a gated feed-forward block (SwiGLU).
struct LlamaLayer {
    let attention: AttentionWeights
    var queryNorm: RMSNorm? = nil
    var keyNorm: RMSNorm? = nil
    let feedForwardNorm: RMSNorm
    let feedForward: FeedForwardWeights
}

/// An architecture built as llama is — pre-norm blocks of attention and SwiGLU over one residual stream, RMSNorm
/// everywhere — that differs in its configuration and in how it reads a block (llama, qwen2, qwen3, phi3). They
/// share `LlamaRunner`.
protocol LlamaFamily: DecoderArchitecture
where Configuration == LlamaConfiguration, Layer == LlamaLayer, Runner == LlamaRunner<Self> {}

extension LlamaFamily {
    static func shape(_ c: LlamaConfiguration) -> DecoderShape {
        DecoderShape(
            dimensions: c.dimensions, attentionScale: c.queryScale == nil ? c.attentionScale : 1, activation: .silu)
    }

    static func runner(_ model: Decoder<Self>, state: DecoderState) throws -> LlamaRunner<Self> {
        try LlamaRunner(model: model, state: state)
    }
}

/// The llama architecture: the RoPE frequency factors Llama 3 files carry (`rope_freqs.weight`), SiLU.
enum Llama: LlamaFamily {
    static let name = "llama"

    static func configuration(_ file: GGUFFile) throws -> LlamaConfiguration {
        var c = try LlamaConfiguration(file: file)
        c.rope.frequencyFactors = try ropeFactors(file, "rope_freqs.weight", count: c.rope.dimensions / 2)
        return c
    }

    static func layer(_ t: BlockTensors, _ c: LlamaConfiguration) throws -> LlamaLayer {
        LlamaLayer(
            attention: try t.attention(c.dimensions), feedForwardNorm: try t.norm("ffn_norm", count: c.embedding),
            feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: c.embedding))
    }
}

/// The F32 vector `name` of `count` values when the file has it (RoPE frequency factors), else nil.
func ropeFactors(_ file: GGUFFile, _ name: String, count: Int) throws -> [Float]? {
    guard let factors = try TensorLoader(file: file).optionalVector(name, count: count) else { return nil }
    return Array(UnsafeBufferPointer(start: factors, count: count))
}

/// One session's llama-family state: the decoder's buffers and blocks, and RoPE.
final class LlamaRunner<A: LlamaFamily>: DecoderRunner {
    let model: Decoder<A>
    let state: DecoderState
    private let rope: RotaryEmbedding

    init(model: Decoder<A>, state: DecoderState) throws {
        self.model = model
        self.state = state
        rope = try state.rotaryEmbedding(model.configuration.rope(forContext: state.contextLength))
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, pass: PassSequences, outputs: Range<Int>,
        logits: UnsafeMutablePointer<Float>, tiledAttention: Bool
    ) {
        let c = model.configuration
        let d = c.dimensions
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
                s.positionQueriesAndKeys(
                    rows: r, queryNorm: layer.queryNorm, keyNorm: layer.keyNorm, rope: rope,
                    queryScale: c.queryScale ?? 1)
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
