import GGUF

// The gemma2 architecture (Gemma 2 text models), as llama.cpp's src/models/gemma2.cpp builds it: Gemma 3's blocks
// (Gemma3.swift) without the per-head query and key norms, with the attention scores soft-capped:
//
//   x = token_embd[token] · √embedding
//   per layer:  q = rope(Wq · norm(x)) · scale,  k = rope(Wk · norm(x)),  v = Wv · norm(x)     (NeoX RoPE)
//               s = cap · tanh(q·k / cap)                    (`attn_logit_softcapping`, 50)
//               h = x + postnorm(Wo · softmax(s) v)
//               x = h + postnorm'(Wdown · (gelu(Wgate · norm(h)) ⊙ Wup · norm(h)))
//   logits = cap' · tanh(token_embd · norm(x) / cap')        (`final_logit_softcapping`, 30; tied output)
//
// Every other layer (`attention.sliding_window_pattern`, 2: layers 0, 2, 4, …) attends only to the last
// `attention.sliding_window` (4096) positions; all rotate with the model's base unless `rope.freq_base_swa` is given.

/// The Gemma 2 architecture: Gemma 3's blocks without Q/K norms, attention and final logit soft-capping.
enum Gemma2: GemmaFamily {
    static let name = "gemma2"

    static func configuration(_ file: GGUFFile) throws -> Gemma3Configuration {
        try Gemma3Configuration(file: file, gemma2: true)
    }

    static func layer(_ t: BlockTensors, _ c: Gemma3Configuration) throws -> GemmaLayer {
        try gemmaLayer(t, c, queryKeyNorms: false)
    }
}
