import GGUF

// The qwen2 architecture (Qwen2, Qwen2.5), as llama.cpp's src/models/qwen2.cpp builds it: llama's blocks
// (Llama.swift) with a bias on each of the Q, K and V projections (`attn_q.bias`, `attn_k.bias`, `attn_v.bias`,
// added to the product as ggml_add does) and RoPE in the NeoX mode (pairs i, i + head/2):
//
//   per layer:  h = x + Wo · attention(rope(Wq · norm(x) + bq), rope(Wk · norm(x) + bk), Wv · norm(x) + bv)
//               x = h + Wdown · (silu(Wgate · norm(h)) ⊙ Wup · norm(h))
//   logits = output · norm(x)        (output = token_embd when the file has no output.weight)

/// The qwen2 architecture: llama's blocks with Q/K/V biases, NeoX RoPE.
enum Qwen2: LlamaFamily {
    static let name = "qwen2"

    static func configuration(_ file: GGUFFile) throws -> LlamaConfiguration {
        try LlamaConfiguration(file: file, architecture: name, ropeMode: .neox)
    }

    /// llama's block: the biases are read with their projections (`BlockTensors.projection` takes `<name>.bias`
    /// when present).
    static func layer(_ t: BlockTensors, _ c: LlamaConfiguration) throws -> LlamaLayer { try Llama.layer(t, c) }
}
