import PureSwiftKernels

/// RMS normalization with a learned scale (`rmsNorm`): `x / √(mean(x²) + ε) · weight`.
struct RMSNorm {
    /// `width` values, or nil for no scale.
    let weight: UnsafePointer<Float>?
    let epsilon: Float

    /// Normalizes `rows` rows of `width` values (contiguous) from `x` into `out` (which may be `x`). Per-head
    /// norms (Gemma's Q/K norms) pass the heads as rows.
    func apply(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, rows: Int, width: Int) {
        for r in 0..<rows {
            rmsNorm(x + r * width, weight: weight, out: out + r * width, count: width, epsilon: epsilon)
        }
    }
}

/// Layer normalization with weight and bias (`layerNorm`): `(x − mean) / √(var + ε) · weight + bias` (BERT).
struct LayerNorm {
    /// `width` values each, or nil.
    let weight: UnsafePointer<Float>?
    let bias: UnsafePointer<Float>?
    let epsilon: Float

    /// Normalizes `rows` rows of `width` values (contiguous) from `x` into `out` (which may be `x`).
    func apply(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, rows: Int, width: Int) {
        for r in 0..<rows {
            layerNorm(
                x + r * width, weight: weight, bias: bias, out: out + r * width, count: width, epsilon: epsilon)
        }
    }
}
