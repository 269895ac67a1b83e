import Foundation

// Kernels that reproduce llama.cpp's x86 CPU backend (AVX2 + FMA + F16C builds of b11434) operation by operation, so
// that generation agrees with it token for token. Small models run through quantized activations are chaotic at the
// level of single roundings: one flipped rounding early on moves late logits by tenths, enough to change a greedy
// pick. These kernels therefore keep ggml's lane structure, summation order and fused multiply-adds:
//
// - `Q4_1Rows.dot`, `Q8_0Rows.dot` (LaneBlocks.swift): ggml_vec_dot_q4_1_q8_1 / tinyBLAS_Q0_AVX — eight float lanes,
//   lane l summing the products of elements 4l…4l+3 of each block, accumulated as `fma(dw·da, lane, acc)`, reduced
//   as hsum_float_8. `Q5_0Rows.dot` likewise (ggml_vec_dot_q5_0_q8_0 and tinyBLAS give the same).
// - `Q6_KRows.dot` (Q6_K.swift): ggml_vec_dot_q6_K_q8_K's eight integer lanes per super-block, `fma(d, lane, acc)`;
//   for batches of 8 rows or more ggml's tiled K-quant product, one `fma(dw·S, da, acc)` per super-block.
// - `Q4_KRows.dot` (Q4_K.swift): the AVX2 build repacks Q4_K matrices (q4_K_8x8_q8_K) and multiplies activation rows in
//   groups of four with ggml_gemm_q4_K_8x8_q8_K (one fma per pair of sub-blocks), the rest with the GEMV (one per
//   super-block); the grouped rows' Q8_K activations come from its own quantizer (`.q8_KRepacked`).
// - `Q2_KRows`, `Q3_KRows`, `Q5_KRows`, `IQ4_XSRows` (their files): one activation row as the type's AVX2 vec_dot
//   (eight integer lanes per super-block, `fma(d·da, lane, acc)`, hsum_float_8; Q2_K's mins as lanes before the
//   products, Q5_K's as a fused scalar sum); batches of 8 rows or more as the tiled K-quant product
//   (TiledKQuants.swift: `fma(fma(−dmin, S₂, d·S₁), da, acc)` per super-block).
// - `Q4_0Rows.dot`, `IQ4_NLRows.dot`: the AVX2 build repacks both (8x8, gemv/gemm_q4_b32_8x8_q8_0_lut_avx), which round
//   every activation row alike: `acc = fma(S, dw·da, acc)` per block, in order.
// - `F32Rows`, `F16Rows`, `BF16Rows` (FloatFormats.swift): one row as ggml_vec_dot_f32/f16/bf16 (four accumulators
//   of eight lanes, GGML_F32x8_REDUCE or hsum), two rows or more as llamafile's tinyBLAS (one accumulator, hsum).
// - The last layer's attention output projection multiplies every row of the batch before the rows whose logits are
//   wanted are kept (Llama.swift), as llama.cpp's graph does: the products above round by the batch.
// - `swiGLUExact`: ggml_vec_swiglu_f32 with ggml_v_silu / ggml_v_expf (a polynomial exp, not libm's).
// - `applyRoPEExact`: the vectorized rotation `fma(x0, cos, −x1·sin)`, `fma(x0, sin, x1·cos)`.
//
// Fused multiply-adds are Swift's `addingProduct`: one instruction in the kernel builds for CPUs with FMA (see
// Dispatch.swift), libm's correctly rounded `fmaf` in the portable build — the same result either way.

/// `a · b + c` rounded once, as an FMA instruction computes it (one instruction where the kernels are built for a
/// CPU with FMA; libm's exact `fmaf` otherwise).
@inline(__always)
@inlinable
func fusedMultiplyAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { c.addingProduct(a, b) }

/// `fma(a, b, −c)`.
@inline(__always)
@inlinable
func fusedMultiplySubtract(_ a: Float, _ b: Float, _ c: Float) -> Float { (-c).addingProduct(a, b) }

/// `−(a·b) + c`, fused.
@inline(__always)
@inlinable
func fusedNegativeMultiplyAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { c.addingProduct(-a, b) }

/// hsum_float_8 of eight lanes: (high half + low half), then (r0 + r2) + (r1 + r3).
@inline(__always)
@inlinable
public func llamaHorizontalSum(_ v: SIMD8<Float>) -> Float {
    let r = v.highHalf + v.lowHalf
    return (r[0] + r[2]) + (r[1] + r[3])
}

/// ggml_v_expf (AVX2 + FMA) for one lane: a range reduction and polynomial with at most 1.5 ulp error.
@inline(__always)
@inlinable
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

/// `llamaExp` on eight lanes at once, with the same operations per lane (so the same results); lanes outside the
/// polynomial's direct range (|n| > 126: results near 0 or infinity) take the scalar path.
@inline(__always)
@inlinable
func llamaExp(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let r = SIMD8<Float>(repeating: 0x1.8p23)
    let z = r.addingProduct(x, 0x1.715476p+0)
    let n = z - r
    if any(n .> 126 .| n .< -126) {
        var out = SIMD8<Float>()
        for i in 0..<8 { out[i] = llamaExp(x[i]) }
        return out
    }
    let b = x.addingProduct(-n, 0x1.62e4p-1).addingProduct(-n, 0x1.7f7d1cp-20)
    let e = unsafeBitCast(z, to: SIMD8<UInt32>.self) &<< 23
    let k = unsafeBitCast(e &+ Float(1).bitPattern, to: SIMD8<Float>.self)
    let u = b * b
    let p1 = SIMD8<Float>(repeating: 0x1.573e2ep-5).addingProduct(SIMD8(repeating: 0x1.0e4020p-7), b)
    let p2 = SIMD8<Float>(repeating: 0x1.fffdb6p-2).addingProduct(SIMD8(repeating: 0x1.555e66p-3), b)
    let j = (0x1.ffffecp-1 * b).addingProduct(p2.addingProduct(p1, u), u)
    return k.addingProduct(j, k)
}

/// SwiGLU as ggml_vec_swiglu_f32 computes it on AVX2: `silu(g) · u` with `silu(g) = g / (1 + ggml_v_expf(0 − g))`
/// for groups of eight, libm's `expf` for a tail. `out` may alias either input.
@inline(__always)
@inlinable
public func swiGLUExact(
    gate: UnsafePointer<Float>, up: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int
) {
    let vectorized = count & ~7
    let g8 = UnsafeRawPointer(gate)
    let u8 = UnsafeRawPointer(up)
    let o8 = UnsafeMutableRawPointer(out)
    for i in Swift.stride(from: 0, to: vectorized, by: 8) {
        let g = g8.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        let u = u8.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        o8.storeBytes(of: g / (1 + llamaExp(0 - g)) * u, toByteOffset: 4 * i, as: SIMD8<Float>.self)
    }
    for i in vectorized..<count {
        let g = gate[i]
        out[i] = g / (1 + expf(-g)) * up[i]
    }
}

/// Rotates one head in the "normal" (adjacent pairs) RoPE mode exactly as ggml's vectorized loop does:
/// `x₀' = fma(x₀, cos, −(x₁·sin))`, `x₁' = fma(x₀, sin, x₁·cos)` (checked against its output element by element).
@inline(__always)
@inlinable
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
