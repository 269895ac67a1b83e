import Foundation

/// How rotary position embedding pairs a head's values (llama.cpp's rope types).
public enum RoPEMode: Sendable, Equatable {
    /// Adjacent pairs (2i, 2i+1): LLAMA_ROPE_TYPE_NORM, used by llama (the GGUF converter permutes Q/K to match).
    case normal
    /// Pairs (i, i + dims/2): LLAMA_ROPE_TYPE_NEOX (Gemma, Qwen, …).
    case neox
}

/// Rotary embedding settings of a model.
public struct RoPEConfiguration: Sendable, Equatable {
    public var mode: RoPEMode
    /// Rotated values per head (`rope.dimension_count`); the rest pass through.
    public var dimensions: Int
    public var frequencyBase: Float
    /// Linear position scaling (1 / `rope.scaling.factor`).
    public var frequencyScale: Float
    /// Per-pair frequency divisors (`rope_freqs.weight`, Llama 3; `rope_factors_short/long.weight`, Phi-3),
    /// `dimensions / 2` values, or nil.
    public var frequencyFactors: [Float]?
    /// Multiplies every cos and sin (ggml's `mscale`: `rope.scaling.attn_factor`, Phi-3's LongRoPE), 1 for none.
    public var attentionFactor: Float

    public init(
        mode: RoPEMode, dimensions: Int, frequencyBase: Float, frequencyScale: Float = 1,
        frequencyFactors: [Float]? = nil, attentionFactor: Float = 1
    ) {
        self.mode = mode
        self.dimensions = dimensions
        self.frequencyBase = frequencyBase
        self.frequencyScale = frequencyScale
        self.frequencyFactors = frequencyFactors
        self.attentionFactor = attentionFactor
    }
}

/// Fills `table` with `dimensions` floats for `position`: cos and sin of each pair's angle, interleaved, computed as
/// ggml does (the angle starts at the position and is multiplied by `base^(−2/dimensions)` pair by pair, in float;
/// `rope_yarn` without YaRN's ramp: cos and sin times the attention factor).
@inlinable
public func ropeTable(_ table: UnsafeMutablePointer<Float>, position: Int, configuration c: RoPEConfiguration) {
    let thetaScale = powf(c.frequencyBase, -2 / Float(c.dimensions))
    var theta = Float(position)
    for pair in 0..<c.dimensions / 2 {
        let factor = c.frequencyFactors?[pair] ?? 1
        let angle = c.frequencyScale * (theta / factor)
        table[2 * pair] = cosf(angle) * c.attentionFactor
        table[2 * pair + 1] = sinf(angle) * c.attentionFactor
        theta *= thetaScale
    }
}
