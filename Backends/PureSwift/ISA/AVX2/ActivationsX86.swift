// The activation work around the matrix products, with the x86 instructions llama.cpp's AVX2 code uses: Q8_0 and
// Q8_K quantization of a product's input rows (`quantize_row_q8_0`'s AVX2 path; `quantize_row_q8_K_ref` computed
// eight lanes at a time) and the tanh GELU's table (ggml_vec_gelu_f32, ggml_vec_geglu_f32). Each value's
// arithmetic is the portable kernels' (Kernels/QuantizedActivations.swift, Kernels/GELU.swift), so the results are
// the same bit for bit; the portable loops compiled to one value at a time (about 5 % of Gemma 3's prompt).
// Compiled in the AVX2 and AVX-512 builds only (this file is linked into every ISA folder).

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Eight floats at `p`.
    @inline(__always)
    func loadFloats8X86(_ p: UnsafePointer<Float>) -> __m256 {
        _mm256_loadu_ps(p)
    }

    /// `roundToNearestEven` of eight floats (|x| < 2²²): 1.5 · 2²³ + x, rounded to an integer by the addition
    /// itself, has the bits 0x4B40_0000 + round(x). (`_mm256_round_ps`, which ggml calls, is a C macro Swift does
    /// not import; the value is the same.)
    @inline(__always)
    func roundToIntegersX86(_ x: __m256) -> __m256i {
        _mm256_sub_epi32(
            _mm256_castps_si256(_mm256_add_ps(x, _mm256_set1_ps(12_582_912))), _mm256_set1_epi32(0x4B40_0000))
    }

    /// The 32 int32 values `v0 … v3` (each within ±128) as bytes, in order: ggml's `packs_epi32`, `packs_epi16`
    /// and lane permutation.
    @inline(__always)
    func packBytesX86(_ v0: __m256i, _ v1: __m256i, _ v2: __m256i, _ v3: __m256i) -> __m256i {
        let bytes = _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3))
        return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
    }

    /// The sum of eight int32 lanes.
    @inline(__always)
    func sumLanesX86(_ v: __m256i) -> Int32 {
        let four = _mm256_add_epi32(v, _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3)))
        let two = _mm256_hadd_epi32(four, four)
        return _mm_cvtsi128_si32(_mm256_castsi256_si128(_mm256_hadd_epi32(two, two)))
    }

    /// The largest of eight floats (none NaN).
    @inline(__always)
    func largestLaneX86(_ v: __m256) -> Float {
        let four = _mm256_max_ps(v, _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3)))
        let two = _mm256_max_ps(four, _mm256_permutevar8x32_ps(four, _mm256_setr_epi32(2, 3, 0, 1, 2, 3, 0, 1)))
        return _mm256_cvtss_f32(
            _mm256_max_ps(two, _mm256_permutevar8x32_ps(two, _mm256_setr_epi32(1, 0, 1, 0, 1, 0, 1, 0))))
    }

    /// `quantizeRowQ8_0` as ggml's AVX2 `quantize_row_q8_0` computes it: the largest magnitude of a block by
    /// `maxps`, `d = max / 127`, the quants `round(x · (127 / max))` packed with saturation (no value exceeds ±127),
    /// and the pair layout's even and odd quants widened from the bytes.
    func quantizeRowQ8_0X86(_ x: UnsafePointer<Float>, count: Int, into out: ActivationRow, withSums: Bool) {
        let signBit = _mm256_set1_ps(-0.0)
        for b in 0..<count / 32 {
            let v = x + 32 * b
            let v0 = loadFloats8X86(v)
            let v1 = loadFloats8X86(v + 8)
            let v2 = loadFloats8X86(v + 16)
            let v3 = loadFloats8X86(v + 24)
            var m = _mm256_andnot_ps(signBit, v0)
            m = _mm256_max_ps(m, _mm256_andnot_ps(signBit, v1))
            m = _mm256_max_ps(m, _mm256_andnot_ps(signBit, v2))
            m = _mm256_max_ps(m, _mm256_andnot_ps(signBit, v3))
            let maxAbs = largestLaneX86(m)
            let d = maxAbs / 127
            let id = _mm256_set1_ps(maxAbs != 0 ? 127 / maxAbs : 0)
            let i0 = roundToIntegersX86(_mm256_mul_ps(v0, id))
            let i1 = roundToIntegersX86(_mm256_mul_ps(v1, id))
            let i2 = roundToIntegersX86(_mm256_mul_ps(v2, id))
            let i3 = roundToIntegersX86(_mm256_mul_ps(v3, id))
            let quants = packBytesX86(i0, i1, i2, i3)
            _mm256_storeu_si256(
                UnsafeMutableRawPointer(out.quants + 32 * b).assumingMemoryBound(to: __m256i.self), quants)
            // The pair layout: the 16 even quants (each word's low byte), then the 16 odd ones (its high byte).
            let pairs = UnsafeMutableRawPointer(out.pairs + 32 * b).assumingMemoryBound(to: __m256i.self)
            _mm256_storeu_si256(pairs, _mm256_srai_epi16(_mm256_slli_epi16(quants, 8), 8))
            _mm256_storeu_si256(pairs + 1, _mm256_srai_epi16(quants, 8))
            out.scales[b] = roundToHalf(d)
            if withSums {
                let sum = sumLanesX86(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)))
                out.sums[b] = roundToHalf(d * Float(sum))
            }
        }
    }

    /// `largestMagnitude256` with `maxps` (which keeps its second operand where the first is NaN, so NaNs are passed
    /// over) and the first position of the largest magnitude found eight lanes at a time by comparing bits.
    @inline(__always)
    func largestMagnitude256X86(_ v: UnsafePointer<Float>) -> (amax: Float, value: Float) {
        let signBit = _mm256_set1_ps(-0.0)
        @inline(__always) func magnitudes(_ i: Int) -> __m256 { _mm256_andnot_ps(signBit, loadFloats8X86(v + i)) }
        var l0 = _mm256_setzero_ps()
        var l1 = l0
        var l2 = l0
        var l3 = l0
        for i in stride(from: 0, to: 256, by: 32) {
            l0 = _mm256_max_ps(magnitudes(i), l0)
            l1 = _mm256_max_ps(magnitudes(i + 8), l1)
            l2 = _mm256_max_ps(magnitudes(i + 16), l2)
            l3 = _mm256_max_ps(magnitudes(i + 24), l3)
        }
        let amax = largestLaneX86(_mm256_max_ps(_mm256_max_ps(l0, l1), _mm256_max_ps(l2, l3)))
        guard amax > 0 else { return (0, 0) }
        let target = _mm256_set1_ps(amax)
        for i in stride(from: 0, to: 256, by: 8) {
            let equal = _mm256_cmpeq_epi32(_mm256_castps_si256(magnitudes(i)), _mm256_castps_si256(target))
            let lanes = _mm256_movemask_ps(_mm256_castsi256_ps(equal))
            if lanes != 0 { return (amax, v[i + Int(lanes.trailingZeroBitCount)]) }
        }
        return (amax, v[255])  // not reached: some lane holds amax
    }

    /// `quantizeSixteenQ8_K` eight lanes at a time: `min(127, round(iscale · v))` into `q`, and their sum.
    @inline(__always)
    func quantizeSixteenQ8_KX86(_ v: UnsafePointer<Float>, iscale: Float, into q: UnsafeMutablePointer<Int8>)
        -> Int32
    {
        let s = _mm256_set1_ps(iscale)
        let most = _mm256_set1_epi32(127)
        let low = _mm256_min_epi32(roundToIntegersX86(_mm256_mul_ps(s, loadFloats8X86(v))), most)
        let high = _mm256_min_epi32(roundToIntegersX86(_mm256_mul_ps(s, loadFloats8X86(v + 8))), most)
        let bytes = packBytesX86(low, high, low, high)  // the sixteen bytes twice
        _mm_storeu_si128(
            UnsafeMutableRawPointer(q).assumingMemoryBound(to: __m128i.self), _mm256_castsi256_si128(bytes))
        return sumLanesX86(_mm256_add_epi32(low, high))
    }

    /// `geluExact` eight values at a time: the inputs rounded to half by F16C's `vcvtps2ph` (to nearest, ties to
    /// even, as `floatToHalf`), the table read at those halves, inputs ≥ 10 passed through and inputs ≤ −10 set to
    /// +0 (after the product with `up`, as ggml_vec_geglu_f32 writes 0 there).
    func geluExactX86(
        _ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int
    ) {
        let table = geluHalfTable
        let source = UnsafeRawPointer(x)
        let target = UnsafeMutableRawPointer(out)
        var i = 0
        while i + 8 <= count {
            let v = source.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            // One F16C conversion per value (the vector form is a C macro Swift does not import).
            var y = SIMD8<Float>()
            for k in 0..<8 { y[k] = table[Int(Float16(v[k]).bitPattern)] }
            y.replace(with: v, where: v .>= 10)
            if let up { y *= UnsafeRawPointer(up).loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self) }
            y.replace(with: 0, where: v .<= -10)
            target.storeBytes(of: y, toByteOffset: 4 * i, as: SIMD8<Float>.self)
            i += 8
        }
        if i < count {
            geluExact(x + i, up: up.map { $0 + i }, out: out + i, count: count - i)
        }
    }
#endif
