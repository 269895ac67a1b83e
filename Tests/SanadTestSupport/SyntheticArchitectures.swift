import Foundation
import GGUF

/// The architectures of issue 39 as synthetic specs (SyntheticModel.swift has `llama` and the writer): each starts
/// from `decoderSpec` and adds the keys and tensors llama.cpp's loader asks of the family (src/models/<arch>.cpp),
/// with the details each family adds set so that they matter (biases, norms, factors, soft caps, a sliding window
/// shorter than a test's sequences).
extension SyntheticModel {
    /// `qwen2`: llama's tensors plus F32 biases on the Q, K and V projections; NeoX RoPE (no key: llama.cpp's rope
    /// type for the architecture), RoPE base 1,000,000 as Qwen2.5 has.
    public static func qwen2(_ size: Size = .small, preTokenizer: String = "qwen2") -> Spec {
        var spec = decoderSpec("qwen2", size, preTokenizer: preTokenizer)
        spec.set("qwen2.rope.freq_base", .float32(1_000_000))
        spec.tensors = decoderTensors(size) { size, prefix in
            let kv = size.kvHeads * size.headDimension
            return llamaLayerTensors(size, prefix) + [
                TensorSpec(prefix + "attn_q.bias", [size.width], .normal(0.1)),
                TensorSpec(prefix + "attn_k.bias", [kv], .normal(0.1)),
                TensorSpec(prefix + "attn_v.bias", [kv], .normal(0.1)),
            ]
        }
        return spec
    }

    /// `qwen3`: llama's tensors without biases plus per-head RMS norms of the queries and keys (`attn_q_norm`,
    /// `attn_k_norm`, head-size wide); heads of 128 values while the width is 256 (`attention.key_length`, as
    /// Qwen3-0.6B's 16 heads of 128 over a width of 1024), so Q and the attention output are wider than the stream.
    public static func qwen3(_ size: Size = .small, preTokenizer: String = "qwen2") -> Spec {
        let head = 128
        var spec = decoderSpec("qwen3", size, preTokenizer: preTokenizer)
        spec.set("qwen3.attention.key_length", .uint32(UInt32(head)))
        spec.set("qwen3.attention.value_length", .uint32(UInt32(head)))
        spec.set("qwen3.rope.freq_base", .float32(1_000_000))
        spec.tensors = decoderTensors(size) { size, prefix in
            let (d, q, kv) = (size.width, size.heads * head, size.kvHeads * head)
            return [
                TensorSpec(prefix + "attn_norm.weight", [d], .aroundOne(0.1)),
                TensorSpec(prefix + "attn_q.weight", [d, q], .normal(0.02)),
                TensorSpec(prefix + "attn_k.weight", [d, kv], .normal(0.02)),
                TensorSpec(prefix + "attn_v.weight", [d, kv], .normal(0.02)),
                TensorSpec(prefix + "attn_output.weight", [q, d], .normal(0.02)),
                TensorSpec(prefix + "attn_q_norm.weight", [head], .aroundOne(0.1)),
                TensorSpec(prefix + "attn_k_norm.weight", [head], .aroundOne(0.1)),
            ] + llamaLayerTensors(size, prefix).filter { $0.name.contains("ffn_") }
        }
        return spec
    }

    /// `llama` as Llama 3 files are: RoPE frequency divisors `rope_freqs.weight` (head/2 values, here around 1 with
    /// a wide spread rather than Llama 3's 1…8 ramp, so that every pair's angle changes), base 500,000, the
    /// `llama-bpe` pre-tokenizer.
    public static func llama3(_ size: Size = .small, preTokenizer: String = "llama-bpe") -> Spec {
        var spec = llama(size, preTokenizer: preTokenizer)
        spec.set("llama.rope.freq_base", .float32(500_000))
        spec.tensors.insert(TensorSpec("rope_freqs.weight", [size.headDimension / 2], .aroundOne(0.3)), at: 1)
        return spec
    }

    /// `phi3` as Phi-4-mini is: Q, K and V in one `attn_qkv`, gate and up in one `ffn_up` of twice the hidden width,
    /// RoPE over three quarters of each head (`rope.dimension_count` 48 of 64), LongRoPE factors
    /// `rope_factors_short/long.weight` with `rope.scaling.attn_factor`, and an original context of 32
    /// (`rope.scaling.original_context_length`), so that every session here (longer than 32) takes the long factors
    /// as llama.cpp does. Its `general.name` leaves out "phi3": llama.cpp gives a model so named Phi-3's token
    /// strip rules, which name `</s>`, a token SmolLM2's vocabulary lacks (the load fails).
    public static func phi3(_ size: Size = .small, preTokenizer: String = "smollm") -> Spec {
        let rotated = size.headDimension * 3 / 4
        var spec = decoderSpec("phi3", size, preTokenizer: preTokenizer)
        spec.set("general.name", .string("synthetic fused-QKV LongRoPE model"))
        spec.set("phi3.rope.dimension_count", .uint32(UInt32(rotated)))
        spec.set("phi3.rope.scaling.original_context_length", .uint32(32))
        spec.set("phi3.rope.scaling.attn_factor", .float32(1.190_238))
        spec.set("phi3.attention.sliding_window", .uint32(0))
        let d = size.width
        let kv = size.kvHeads * size.headDimension
        var tensors = decoderTensors(size) { size, prefix in
            [
                TensorSpec(prefix + "attn_norm.weight", [d], .aroundOne(0.1)),
                TensorSpec(prefix + "attn_qkv.weight", [d, d + 2 * kv], .normal(0.02)),
                TensorSpec(prefix + "attn_output.weight", [d, d], .normal(0.02)),
                TensorSpec(prefix + "ffn_norm.weight", [d], .aroundOne(0.1)),
                TensorSpec(prefix + "ffn_up.weight", [d, 2 * size.feedForward], .normal(0.02)),
                TensorSpec(prefix + "ffn_down.weight", [size.feedForward, d], .normal(0.02)),
            ]
        }
        tensors.insert(
            contentsOf: [
                TensorSpec("rope_factors_long.weight", [rotated / 2], .aroundOne(0.3)),
                TensorSpec("rope_factors_short.weight", [rotated / 2], .aroundOne(0.2)),
            ], at: 1)
        spec.tensors = tensors
        return spec
    }

    /// `gemma2`: Gemma's pre and post norms around attention and feed-forward, no Q/K norms, the output tied to the
    /// token embedding (llama.cpp reads no `output.weight`), attention soft-capping 50 and final soft-capping 30,
    /// and a sliding window of 16 positions on every other layer (layer 0 of 2), shorter than a test's sequences.
    public static func gemma2(_ size: Size = .small, preTokenizer: String = "smollm") -> Spec {
        var spec = decoderSpec("gemma2", size, preTokenizer: preTokenizer)
        spec.set("gemma2.attention.sliding_window", .uint32(16))
        spec.set("gemma2.attn_logit_softcapping", .float32(50))
        spec.set("gemma2.final_logit_softcapping", .float32(30))
        spec.set("gemma2.attention.layer_norm_rms_epsilon", .float32(1e-6))
        spec.tensors = decoderTensors(size) { size, prefix in
            let d = size.width
            return llamaLayerTensors(size, prefix) + [
                TensorSpec(prefix + "post_attention_norm.weight", [d], .aroundOne(0.1)),
                TensorSpec(prefix + "post_ffw_norm.weight", [d], .aroundOne(0.1)),
            ]
        }.filter { $0.name != "output.weight" }
        return spec
    }
}

extension SyntheticModel.Spec {
    /// Sets metadata key `key` to `value`, in place when the spec has it.
    mutating func set(_ key: String, _ value: GGUFValue) {
        if let i = metadata.firstIndex(where: { $0.key == key }) {
            metadata[i].value = value
        } else {
            metadata.append(SyntheticModel.Metadatum(key, value))
        }
    }
}

extension SyntheticModel {
    /// A synthetic model family as the fidelity tests check it and the benchmarks run it: its name, the seed its
    /// test uses (in the test's name) and its spec at a size.
    public struct Family: Sendable {
        public var name: String
        public var seed: UInt64
        public var spec: @Sendable (Size) -> Spec

        public init(_ name: String, seed: UInt64, spec: @escaping @Sendable (Size) -> Spec) {
            (self.name, self.seed, self.spec) = (name, seed, spec)
        }
    }

    /// Every synthetic family with its test's seed: llama (SyntheticLlamaTests), then qwen2, qwen3, Llama 3
    /// (`llama` with `rope_freqs`), phi3 and gemma2 (SyntheticArchitectureTests).
    public static let families: [Family] = [
        Family("llama", seed: 39) { llama($0) },
        Family("qwen2", seed: 2) { qwen2($0) },
        Family("qwen3", seed: 3) { qwen3($0) },
        Family("llama3", seed: 31) { llama3($0) },
        Family("phi3", seed: 4) { phi3($0) },
        Family("gemma2", seed: 5) { gemma2($0) },
    ]
}
