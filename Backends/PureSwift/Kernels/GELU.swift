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

/// GELU in its erf form over `count` values (in place allowed), sixteen at a time with erf from Abramowitz and
/// Stegun 7.1.26 (absolute error under 1.5e-7) and a polynomial exp: for encoders, where llama.cpp's rounding is
/// not the reference (BERT embeddings are checked against a float64 model). The tail uses libm's `erff`.
@inline(__always)
@inlinable
public func geluErfApproximate(_ x: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int) {
    var i = 0
    while i + 16 <= count {
        let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD16<Float>.self)
        let z = v * geluInverseSqrtTwo
        let a = z.replacing(with: -z, where: z .< 0)
        let t = 1 / (a * 0.327_591_1 + 1)
        var p = SIMD16<Float>(repeating: 1.061_405_429)
        p = (p * t) + (-1.453_152_027 as Float)
        p = (p * t) + 1.421_413_741
        p = (p * t) + (-0.284_496_736 as Float)
        p = (p * t) + 0.254_829_592
        let y = 1 - p * t * expSIMD16(-(a * a))
        let erf = y.replacing(with: -y, where: z .< 0)
        UnsafeMutableRawPointer(out + i).storeBytes(of: (0.5 * v) * (1 + erf), as: SIMD16<Float>.self)
        i += 16
    }
    while i < count {
        let v = x[i]
        out[i] = (0.5 * v) * (1 + erff(v * geluInverseSqrtTwo))
        i += 1
    }
}

/// e^x for sixteen values (relative error about 2e-7; x below −87 gives 0): 2^n · e^r with n = round(x / ln 2)
/// and a degree-6 polynomial for e^r, |r| ≤ ln 2 / 2.
@inline(__always)
@inlinable
public func expSIMD16(_ x: SIMD16<Float>) -> SIMD16<Float> {
    var clamped = x.replacing(with: -87, where: x .< -87)
    clamped.replace(with: 88, where: clamped .> 88)
    // Adding 1.5 · 2^23 rounds to an integer held in the low mantissa bits (generic SIMD rounding and conversion
    // are slow paths in Swift).
    let shifted = clamped * 1.442_695_04 + 12_582_912
    let n = shifted - 12_582_912
    let r = clamped - n * 0.693_145_75 - n * 1.428_606_8e-6
    var p = SIMD16<Float>(repeating: 1.0 / 720)
    p = p * r + 1.0 / 120
    p = p * r + 1.0 / 24
    p = p * r + 1.0 / 6
    p = p * r + 0.5
    p = p * r + 1
    p = p * r + 1
    let bits = (unsafeBitCast(shifted, to: SIMD16<Int32>.self) &- 0x4B40_0000 &+ 127) &<< 23
    return p * unsafeBitCast(bits, to: SIMD16<Float>.self)
}
