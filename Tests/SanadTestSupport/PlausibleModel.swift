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
        w.setLlama(.init(layers: layers, width: dim, feedForward: ffn, heads: heads, kvHeads: kvHeads))
        w.setByteLevelBPE(tokens: tokens, merges: ["a b", "c d"], control: ["<|end|>"])
        w.set("tokenizer.ggml.scores", .float32s(tokens.map { _ in 0 }))
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
