import GGUF

// The phi3 architecture (Phi-3, Phi-3.5, Phi-4-mini), as llama.cpp's src/models/phi3.cpp builds it: llama's blocks
// (Llama.swift) with Q, K and V in one matrix (`attn_qkv`, rows Q's then K's then V's; separate `attn_q/k/v` are
// read too), gate and up in one `ffn_up` of twice the hidden width (its first half the gate), NeoX RoPE over the
// first `rope.dimension_count` values of each head (Phi-4-mini rotates three quarters), and the queries scaled
// after RoPE rather than the scores:
//
//   per layer:  q, k, v = split(Wqkv · norm(x))
//               h = x + Wo · attention(rope(q) / √head, rope(k), v)          (scores unscaled)
//               g, u = split(Wup · norm(h));  x = h + Wdown · (silu(g) ⊙ u)
//   logits = output · norm(x)
//
// LongRoPE (Phi-3 128k, Phi-3.5, Phi-4-mini): per-pair frequency divisors `rope_factors_short.weight` for sessions
// within `rope.scaling.original_context_length` and `rope_factors_long.weight` beyond it (llama.cpp's
// `get_rope_factors`, by the sequence's context), and cos/sin times `rope.scaling.attn_factor`. llama.cpp ignores
// Phi's sliding window (`attention.sliding_window`), and so does this engine.

/// The phi3 architecture: fused QKV and gate-up matrices, LongRoPE factors, queries scaled after RoPE.
enum Phi3: LlamaFamily {
    static let name = "phi3"

    static func configuration(_ file: GGUFFile) throws -> LlamaConfiguration {
        var c = try LlamaConfiguration(
            file: file, architecture: name, ropeMode: .neox, partialRotation: true,
            scalingTypes: ["none", "linear", "longrope"])
        let pairs = c.rope.dimensions / 2
        if let long = try ropeFactors(file, "rope_factors_long.weight", count: pairs) {
            var longRoPE = c.rope
            longRoPE.frequencyFactors = long
            c.longRoPE = longRoPE
        }
        c.rope.frequencyFactors = try ropeFactors(file, "rope_factors_short.weight", count: pairs)
        c.queryScale = 1 / Float(c.headDimension).squareRoot()
        return c
    }

    static func layer(_ t: BlockTensors, _ c: LlamaConfiguration) throws -> LlamaLayer {
        LlamaLayer(
            attention: try t.fusedAttention(c.dimensions),
            feedForwardNorm: try t.norm("ffn_norm", count: c.embedding),
            feedForward: try t.fusedGatedFeedForward(width: c.feedForward, embedding: c.embedding))
    }
}
