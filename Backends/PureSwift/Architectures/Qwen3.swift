import GGUF

// The qwen3 architecture (Qwen3 dense models), as llama.cpp's src/models/qwen3.cpp builds it: llama's blocks
// (Llama.swift) without biases, each query and key head through its own RMSNorm (`attn_q_norm`, `attn_k_norm`,
// head-size wide) before RoPE, NeoX RoPE, and heads whose size may differ from embedding / heads
// (`attention.key_length`):
//
//   per layer:  q, k, v = Wq · norm(x), Wk · norm(x), Wv · norm(x)
//               h = x + Wo · attention(rope(qnorm(q)), rope(knorm(k)), v)
//               x = h + Wdown · (silu(Wgate · norm(h)) ⊙ Wup · norm(h))
//   logits = output · norm(x)        (output = token_embd when the file has no output.weight)

/// The qwen3 architecture: llama's blocks with per-head query and key norms, NeoX RoPE.
enum Qwen3: LlamaFamily {
    static let name = "qwen3"

    static func configuration(_ file: GGUFFile) throws -> LlamaConfiguration {
        try LlamaConfiguration(file: file, architecture: name, ropeMode: .neox)
    }

    static func layer(_ t: BlockTensors, _ c: LlamaConfiguration) throws -> LlamaLayer {
        LlamaLayer(
            attention: try t.attention(c.dimensions), queryNorm: try t.norm("attn_q_norm", count: c.headDimension),
            keyNorm: try t.norm("attn_k_norm", count: c.headDimension),
            feedForwardNorm: try t.norm("ffn_norm", count: c.embedding),
            feedForward: try t.gatedFeedForward(width: c.feedForward, embedding: c.embedding))
    }
}
