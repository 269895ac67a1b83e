import Foundation
import GGUF

/// A header-consistent llama model for validation tests: every key and tensor a real file has, shapes that agree,
/// zero-filled F32 weights (2 layers, width 32, 2 heads of 16 sharing 1 KV head, vocabulary of 8 byte tokens).
/// Tests change one thing and expect `ModelValidation` to name it.
public enum PlausibleModel {
    public static let tokens = ["a", "b", "c", "d", "Ġ", "ab", "cd", "<|end|>"]
    public static let dim = 32, heads = 2, kvHeads = 1, headDim = 16, ffn = 64, layers = 2

    /// The writer, ready to be changed (`set`, `tensors`) and written.
    public static func writer() -> GGUFWriter {
        var w = GGUFWriter()
        w.set("general.architecture", .string("llama"))
        w.set("llama.block_count", .uint32(UInt32(layers)))
        w.set("llama.context_length", .uint32(128))
        w.set("llama.embedding_length", .uint32(UInt32(dim)))
        w.set("llama.feed_forward_length", .uint32(UInt32(ffn)))
        w.set("llama.attention.head_count", .uint32(UInt32(heads)))
        w.set("llama.attention.head_count_kv", .uint32(UInt32(kvHeads)))
        w.set("llama.rope.freq_base", .float32(10_000))
        w.set("llama.attention.layer_norm_rms_epsilon", .float32(1e-5))
        w.set("tokenizer.ggml.model", .string("gpt2"))
        w.set("tokenizer.ggml.pre", .string("smollm"))
        w.set("tokenizer.ggml.tokens", .strings(tokens))
        w.set("tokenizer.ggml.scores", .float32s(tokens.map { _ in 0 }))
        w.set("tokenizer.ggml.token_type", .int32s(tokens.map { $0 == "<|end|>" ? 3 : 1 }))
        w.set("tokenizer.ggml.merges", .strings(["a b", "c d"]))
        w.set("tokenizer.ggml.bos_token_id", .uint32(7))
        w.set("tokenizer.ggml.eos_token_id", .uint32(7))
        func add(_ name: String, _ dims: [Int]) {
            w.tensors.append(.f32(name, dims, [Float](repeating: 0, count: dims.reduce(1, *))))
        }
        add("token_embd.weight", [dim, tokens.count])
        add("output_norm.weight", [dim])
        for l in 0..<layers {
            let p = "blk.\(l)."
            add(p + "attn_norm.weight", [dim])
            add(p + "attn_q.weight", [dim, heads * headDim])
            add(p + "attn_k.weight", [dim, kvHeads * headDim])
            add(p + "attn_v.weight", [dim, kvHeads * headDim])
            add(p + "attn_output.weight", [heads * headDim, dim])
            add(p + "ffn_norm.weight", [dim])
            add(p + "ffn_gate.weight", [dim, ffn])
            add(p + "ffn_up.weight", [dim, ffn])
            add(p + "ffn_down.weight", [ffn, dim])
        }
        return w
    }

    /// Writes `writer` into a fresh temporary folder as `name` and opens it.
    public static func open(_ writer: GGUFWriter, name: String = "model.gguf") throws -> GGUFFile {
        let url = try TestPaths.temporaryDirectory().appendingPathComponent(name)
        try writer.write(to: url)
        return try GGUFFile(path: url.path)
    }
}
