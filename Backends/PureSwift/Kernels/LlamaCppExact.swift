import Foundation

// Kernels that reproduce llama.cpp's x86 CPU backend (AVX2 + FMA + F16C builds of b11434) operation by operation, so
// that generation agrees with it token for token. Small models run through quantized activations are chaotic at the
// level of single roundings: one flipped rounding early on moves late logits by tenths, enough to change a greedy
// pick. These kernels therefore keep ggml's lane structure, summation order and fused multiply-adds:
//
// - `dotQ4_1Exact`, `dotQ8_0Exact`: ggml_vec_dot_q4_1_q8_1 / tinyBLAS_Q0_AVX — eight float lanes, lane l summing
//   the products of elements 4l…4l+3 of each block, accumulated as `fma(dw·da, lane, acc)`, reduced as hsum_float_8.
// - `swiGLUExact`: ggml_vec_swiglu_f32 with ggml_v_silu / ggml_v_expf (a polynomial exp, not libm's).
// - `applyRoPEExact`: the vectorized rotation `fma(x0, cos, −x1·sin)`, `fma(x0, sin, x1·cos)`.
//
// An FMA is emulated in double (`fusedMultiplyAdd`): exact except in ties that do not occur in practice. These kernels
// are slower than the plain ones, so the engine uses them where llama.cpp's results are reproducible anyway —
// batches under 64 tokens (generation, short prompts) — and the fast kernels for long prompts and perplexity.

/// `a · b + c` rounded once, as an FMA instruction computes it (the product of two floats is exact in double; the
/// sum is rounded to double and then to float, which differs from one rounding only in vanishingly rare ties).
/// Used where llama.cpp's kernels use FMA and the result is rounded on to half precision.
@inline(__always)
func fusedMultiplyAdd(_ a: Float, _ b: Float, _ c: Float) -> Float {
    Float(Double(a) * Double(b) + Double(c))
}

/// `fma(a, b, −c)`.
@inline(__always)
func fusedMultiplySubtract(_ a: Float, _ b: Float, _ c: Float) -> Float {
    Float(Double(a) * Double(b) - Double(c))
}

/// `−(a·b) + c`, fused.
@inline(__always)
func fusedNegativeMultiplyAdd(_ a: Float, _ b: Float, _ c: Float) -> Float {
    Float(Double(c) - Double(a) * Double(b))
}

/// hsum_float_8 of the lanes (low = 0…3, high = 4…7): (high + low), then (r0 + r2) + (r1 + r3).
@inline(__always)
func llamaHorizontalSum(_ low: SIMD4<Float>, _ high: SIMD4<Float>) -> Float {
    let r = high + low
    return (r[0] + r[2]) + (r[1] + r[3])
}

/// `acc = fma(d, lanes, acc)` for four float lanes: products of a float and a small integer are exact in double,
/// so one rounding to double and one to float stand in for the FMA's single rounding.
@inline(__always)
func fusedMultiplyAdd(_ d: Double, _ lanes: SIMD4<Int32>, _ acc: SIMD4<Float>) -> SIMD4<Float> {
    SIMD4<Float>(SIMD4<Double>(lanes) * d + SIMD4<Double>(acc))
}

/// Q4_1 × Q8_1 as ggml_vec_dot_q4_1_q8_1 (AVX2) computes it.
@inline(__always)
public func dotQ4_1Exact(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var low = SIMD4<Float>()  // ggml lanes 0…3: elements 0…15 of each block
    var high = SIMD4<Float>()  // lanes 4…7: elements 16…31
    var offsets: Float = 0
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let (w0, w1, w2, w3) = unpackQ4_1(block)
        let x = UnsafeRawPointer(a.quants + b * 32)
        let d = Double(loadHalf(block) * a.scales[b])
        offsets = fusedMultiplyAdd(loadHalf(block, 2), a.sums[b], offsets)
        low = fusedMultiplyAdd(d, dot16(w0, w1, x), low)
        high = fusedMultiplyAdd(d, dot16(w2, w3, x + 16), high)
    }
    return llamaHorizontalSum(low, high) + offsets
}

/// Q8_0 × Q8_0 as llamafile's tinyBLAS_Q0_AVX (and ggml_vec_dot_q8_0_q8_0) computes it.
@inline(__always)
public func dotQ8_0Exact(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var low = SIMD4<Float>()
    var high = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let x = UnsafeRawPointer(a.quants + b * 32)
        let d = Double(loadHalf(block) * a.scales[b])
        low = fusedMultiplyAdd(d, dot16Int8(block.loadUnaligned(fromByteOffset: 2, as: SIMD8<Int16>.self), x), low)
        high = fusedMultiplyAdd(
            d, dot16Int8(block.loadUnaligned(fromByteOffset: 18, as: SIMD8<Int16>.self), x + 16), high)
    }
    return llamaHorizontalSum(low, high)
}

/// ggml_v_expf (AVX2 + FMA) for one lane: a range reduction and polynomial with at most 1.5 ulp error.
@inline(__always)
func llamaExp(_ x: Float) -> Float {
    let r: Float = 0x1.8p23
    let z = fusedMultiplyAdd(x, 0x1.715476p+0, r)
    let n = z - r
    let b = fusedNegativeMultiplyAdd(n, 0x1.7f7d1cp-20, fusedNegativeMultiplyAdd(n, 0x1.62e4p-1, x))
    let e = z.bitPattern << 23
    let k = Float(bitPattern: e &+ Float(1).bitPattern)
    let u = b * b
    let j = fusedMultiplyAdd(
        fusedMultiplyAdd(
            fusedMultiplyAdd(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fusedMultiplyAdd(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
        u, 0x1.ffffecp-1 * b)
    guard abs(n) > 126 else { return fusedMultiplyAdd(j, k, k) }
    let g: UInt32 = n <= 0 ? 0x8200_0000 : 0
    let s1 = Float(bitPattern: g &+ 0x7F00_0000)
    let s2 = Float(bitPattern: e &- g)
    if abs(n) > 192 { return s1 * s1 }
    return fusedMultiplyAdd(s2, j, s2) * s1
}

/// SwiGLU as ggml_vec_swiglu_f32 computes it on AVX2: `silu(g) · u` with `silu(g) = g / (1 + ggml_v_expf(0 − g))`
/// for groups of eight, libm's `expf` for a tail. `out` may alias either input.
@inline(__always)
public func swiGLUExact(
    gate: UnsafePointer<Float>, up: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int
) {
    let vectorized = count & ~7
    for i in 0..<vectorized {
        let g = gate[i]
        out[i] = g / (1 + llamaExp(0 - g)) * up[i]
    }
    for i in vectorized..<count {
        let g = gate[i]
        out[i] = g / (1 + expf(-g)) * up[i]
    }
}

/// Rotates one head in the "normal" (adjacent pairs) RoPE mode exactly as ggml's vectorized loop does:
/// `x₀' = fma(x₀, cos, −(x₁·sin))`, `x₁' = fma(x₀, sin, x₁·cos)` (checked against its output element by element).
@inline(__always)
public func applyRoPEExact(
    _ x: UnsafeMutablePointer<Float>, table: UnsafePointer<Float>, dimensions: Int, mode: RoPEMode
) {
    let offset = mode == .normal ? 1 : dimensions / 2
    for pair in 0..<dimensions / 2 {
        let i = mode == .normal ? 2 * pair : pair
        let cosTheta = table[2 * pair]
        let sinTheta = table[2 * pair + 1]
        let x0 = x[i]
        let x1 = x[i + offset]
        x[i] = fusedMultiplySubtract(cosTheta, x0, sinTheta * x1)
        x[i + offset] = fusedMultiplyAdd(sinTheta, x0, cosTheta * x1)
    }
}
