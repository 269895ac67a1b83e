import Foundation

// GELU as llama.cpp's CPU backend computes it (ggml-cpu/vec.h, b11434):
//
// - the tanh approximation (ggml_gelu, ggml_geglu) goes through a table of 65536 halves, `ggml_table_gelu_f16`:
//   the input is rounded to half, its GELU read from the table (itself rounded to half) and widened to float;
//   inputs ≤ −10 give 0 and inputs ≥ 10 pass through. The table holds `0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²)))`
//   as GCC compiles ggml_gelu_f32 with FMA available: `1 + (0.044715·x)·x` fused into one rounding. Checked against
//   the table of the b11434 build on this machine, entry by entry (the fused form differs from the unfused one at
//   the half 0xBFFF, −1.999).
// - the erf form (ggml_gelu_erf, ggml_geglu_erf; BERT's "gelu") is computed directly: `0.5·x·(1 + erf(x/√2))`.
//
// The gated forms multiply by `up` afterwards (GEGLU: `gelu(gate) · up`).

/// √(2/π) as ggml rounds it to float.
@inlinable var geluSqrtTwoOverPi: Float { 0.79788456080286535587989211986876 }
/// 1/√2 as ggml rounds it to float.
@inlinable var geluInverseSqrtTwo: Float { 0.70710678118654752440084436210484 }

/// ggml_gelu_f32 (the tanh approximation) before the table rounds it to half.
@inlinable
public func geluTanhApproximation(_ x: Float) -> Float {
    let inner = Float(1).addingProduct(0.044715 * x, x)
    return (0.5 * x) * (1 + tanhf((geluSqrtTwoOverPi * x) * inner))
}

/// ggml_table_gelu_f16 widened to floats: entry `h` is the GELU of the half `h`, rounded to half.
// Filled once by its initializer, read-only afterwards: safe to share between threads.
nonisolated(unsafe) public let geluHalfTable: UnsafePointer<Float> = {
    let table = UnsafeMutablePointer<Float>.allocate(capacity: 1 << 16)
    for h in 0..<(1 << 16) {
        table[h] = roundToHalf(geluTanhApproximation(halfToFloat(UInt16(h))))
    }
    return UnsafePointer(table)
}()

/// GELU (tanh approximation) of one value as ggml_vec_gelu_f32 computes it, reading `table` (`geluHalfTable`).
@inline(__always)
@inlinable
func geluExact(_ x: Float, table: UnsafePointer<Float>) -> Float {
    if x <= -10 { return 0 }
    if x >= 10 { return x }
    return table[Int(floatToHalf(x))]
}

/// GELU (tanh approximation) over `count` values as ggml computes it: ggml_vec_gelu_f32 when `up` is nil,
/// ggml_vec_geglu_f32 (`gelu(x) · up`; 0 where x ≤ −10) otherwise. `out` may alias the inputs.
@inline(__always)
@inlinable
public func geluExact(
    _ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int
) {
    let table = geluHalfTable
    if let up {
        for i in 0..<count {
            let v = x[i]
            out[i] = v <= -10 ? 0 : geluExact(v, table: table) * up[i]
        }
    } else {
        for i in 0..<count { out[i] = geluExact(x[i], table: table) }
    }
}

/// GELU in its erf form over `count` values as ggml_vec_gelu_erf_f32 computes it (`0.5·x·(1 + erf(x/√2))`, libm's
/// `erff`), times `up` element-wise when given (ggml_vec_geglu_erf_f32). `out` may alias the inputs.
@inline(__always)
@inlinable
public func geluErfExact(
    _ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int
) {
    if let up {
        for i in 0..<count {
            let v = x[i]
            out[i] = (0.5 * v) * (1 + erff(v * geluInverseSqrtTwo)) * up[i]
        }
    } else {
        for i in 0..<count {
            let v = x[i]
            out[i] = (0.5 * v) * (1 + erff(v * geluInverseSqrtTwo))
        }
    }
}
