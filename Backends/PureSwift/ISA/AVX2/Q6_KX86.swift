// The Q6_K products (Kernels/Q6_K.swift) with x86 instructions. Each 32-value chunk of a super-block unpacks once
// into unsigned 6-bit bytes; `pmaddubsw` multiplies them by the activations and `pmaddwd` by the two 16-value
// sub-blocks' scales adds them up, which gives ggml's eight integer lanes; the −32 offset comes off as
// 32 · Σ scale · (sub-block sum of the activations), also with `pmaddwd`. For batches of at least
// `q6_KTiledMinimumBatch` rows (`dotQ6_KTiled`), a chunk meets eight activation rows and `rowSums` gives each row's
// exact integer sum in one lane, so the float accumulation runs eight rows at a time; one row at a time
// (`Q6_KRows.dot`), the lanes accumulate as ggml's do. Either way the values are the same bit for bit.
//
// The x86 builds' `BuiltKernels.multiplyRows` sends Q6_K matrices here; other builds run Q6_K.swift. Compiled in
// the AVX2 and AVX-512 builds only (this file is linked into every ISA folder).

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Rows `rows` of the Q6_K matrix `w` times every activation row of `x` (Q8_K), into `out[b · outStride + r]`:
    /// `multiplyRows` for Q6_K, bit for bit. Batches of at least `q6_KTiledMinimumBatch` rows take the tiled
    /// rounding and go in groups of eight, the last one padded (`Q8_KGroupX86`; sixteen in the AVX-512 VNNI build,
    /// ISA/AVX512VNNI/Q6_KVNNI.swift); smaller ones go one row at a time.
    func multiplyRowsQ6_KX86(
        _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int
    ) {
        let batch = x.rows
        guard batch >= q6_KTiledMinimumBatch else {
            for b in 0..<batch {
                let a = x.row(b)
                for r in rows { out[b * outStride + r] = dotQ6_KX86(w.row(r), a, superBlocks: w.columns / 256) }
            }
            return
        }
        #if SANAD_KERNEL_BUILD_AVX512VNNI
            multiplyLanesVNNI(w, x, count: batch, rows: rows, out: out, outStride: outStride) {
                productsVNNI(RowQ6_KVNNI.self, $0, $1, unpacked: $2, results: $3)
            }
        #else
            multiplyGroupsQ8_KX86(w, x, count: batch, rows: rows, out: out, outStride: outStride) {
                groupProductsQ6_KTiled($0, $1)
            }
        #endif
    }

    /// Chunk `c` (0..<8: weights 32c ..< 32c + 32) of the Q6_K super-block at `block` as unsigned 6-bit bytes.
    @inline(__always)
    func unpackChunkQ6_K(_ block: UnsafeRawPointer, _ c: Int) -> __m256i {
        let n = c / 4  // the 128-value half
        let k = c % 4
        let ql = _mm256_loadu_si256((block + 64 * n + 32 * (k % 2)).assumingMemoryBound(to: __m256i.self))
        let qh = _mm256_loadu_si256((block + 128 + 32 * n).assumingMemoryBound(to: __m256i.self))
        let low = _mm256_and_si256(_mm256_srli_epi16(ql, Int32(4 * (k / 2))), _mm256_set1_epi8(0x0F))
        let high = _mm256_and_si256(_mm256_srli_epi16(qh, Int32(2 * k)), _mm256_set1_epi8(0x03))
        return _mm256_or_si256(low, _mm256_slli_epi16(high, 4))
    }

    /// The scales of chunk `c` from a super-block's 16 `scales`, as sixteen 16-bit lanes: scale 2c for the chunk's
    /// first 16 values, 2c + 1 for the last 16.
    @inline(__always)
    func chunkScalesQ6_K(_ scales: __m128i, _ c: Int) -> __m256i {
        let pick = _mm_set_epi64x(0x0101_0101_0101_0101 &* Int64(2 * c + 1), 0x0101_0101_0101_0101 &* Int64(2 * c))
        return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, pick))
    }

    /// `Q6_KRows.dot` of one weight row and one activation row (generation and batches under
    /// `q6_KTiledMinimumBatch`): ggml's eight integer lanes per super-block (`superBlockLanesQ6_K`), each
    /// accumulated as `fma(da·dw, lane, acc)`, then hsum_float_8.
    @inline(__always)
    func dotQ6_KX86(_ row: UnsafeRawPointer, _ a: ActivationRow, superBlocks: Int) -> Float {
        var acc = _mm256_setzero_ps()
        for b in 0..<superBlocks {
            let block = row + b * q6_KBlockBytes
            let scales = _mm_loadu_si128((block + 192).assumingMemoryBound(to: __m128i.self))
            var lanes = _mm256_setzero_si256()
            for c in 0..<8 {
                let products = bytePairProducts(unpackChunkQ6_K(block, c), a.quants + 256 * b + 32 * c)
                lanes = _mm256_add_epi32(lanes, _mm256_madd_epi16(products, chunkScalesQ6_K(scales, c)))
            }
            // Lane l's offset: 32 · (scale₂ₗ · sum₂ₗ + scale₂ₗ₊₁ · sum₂ₗ₊₁), the block sums packed to 16 bits in order.
            let sums = UnsafeRawPointer(a.blockSums + 16 * b)
            let packed = _mm256_packs_epi32(
                _mm256_loadu_si256(sums.assumingMemoryBound(to: __m256i.self)),
                _mm256_loadu_si256((sums + 32).assumingMemoryBound(to: __m256i.self)))
            let sums16 = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7))
            let scales32 = _mm256_slli_epi16(_mm256_cvtepi8_epi16(scales), 5)
            lanes = _mm256_sub_epi32(lanes, _mm256_madd_epi16(sums16, scales32))
            let d = _mm256_set1_ps(a.scales[b] * _cvtsh_ss(block.loadUnaligned(fromByteOffset: 208, as: UInt16.self)))
            acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(lanes), acc)
        }
        return llamaHorizontalSum(acc)
    }

    /// `dotQ6_KTiled` of one Q6_K row and the eight rows of `group`, lane i for row i.
    @inline(__always)
    func groupProductsQ6_KTiled(_ row: UnsafeRawPointer, _ group: Q8_KGroupX86) -> SIMD8<Float> {
        let stride = group.columns
        var acc = _mm256_setzero_ps()
        for b in 0..<group.columns / 256 {
            let block = row + b * q6_KBlockBytes
            let scales = _mm_loadu_si128((block + 192).assumingMemoryBound(to: __m128i.self))
            // The offset: 32 · Σ_j (scale₂ⱼ · sum₂ⱼ + scale₂ⱼ₊₁ · sum₂ⱼ₊₁) over the sixteen 16-value sub-blocks.
            let scales32 = _mm256_slli_epi16(_mm256_cvtepi8_epi16(scales), 5)
            var offsets = _mm256_setzero_si256()
            for j in 0..<8 {
                let sums = _mm256_loadu_si256(
                    UnsafeRawPointer(group.pairs + 16 * (8 * b + j)).assumingMemoryBound(to: __m256i.self))
                let pair = _mm256_permutevar8x32_epi32(scales32, _mm256_set1_epi32(Int32(j)))
                offsets = _mm256_add_epi32(offsets, _mm256_madd_epi16(sums, pair))
            }
            var v0 = _mm256_setzero_si256()
            var v1 = _mm256_setzero_si256()
            var v2 = _mm256_setzero_si256()
            var v3 = _mm256_setzero_si256()
            var v4 = _mm256_setzero_si256()
            var v5 = _mm256_setzero_si256()
            var v6 = _mm256_setzero_si256()
            var v7 = _mm256_setzero_si256()
            for c in 0..<8 {
                let q = unpackChunkQ6_K(block, c)
                let scale = chunkScalesQ6_K(scales, c)
                let a = group.quants + 256 * b + 32 * c
                v0 = _mm256_add_epi32(v0, _mm256_madd_epi16(bytePairProducts(q, a), scale))
                v1 = _mm256_add_epi32(v1, _mm256_madd_epi16(bytePairProducts(q, a + stride), scale))
                v2 = _mm256_add_epi32(v2, _mm256_madd_epi16(bytePairProducts(q, a + 2 * stride), scale))
                v3 = _mm256_add_epi32(v3, _mm256_madd_epi16(bytePairProducts(q, a + 3 * stride), scale))
                v4 = _mm256_add_epi32(v4, _mm256_madd_epi16(bytePairProducts(q, a + 4 * stride), scale))
                v5 = _mm256_add_epi32(v5, _mm256_madd_epi16(bytePairProducts(q, a + 5 * stride), scale))
                v6 = _mm256_add_epi32(v6, _mm256_madd_epi16(bytePairProducts(q, a + 6 * stride), scale))
                v7 = _mm256_add_epi32(v7, _mm256_madd_epi16(bytePairProducts(q, a + 7 * stride), scale))
            }
            let sums = _mm256_sub_epi32(rowSums(v0, v1, v2, v3, v4, v5, v6, v7), offsets)
            let dw = _mm256_set1_ps(_cvtsh_ss(block.loadUnaligned(fromByteOffset: 208, as: UInt16.self)))
            acc = _mm256_fmadd_ps(
                _mm256_mul_ps(dw, _mm256_cvtepi32_ps(sums)), _mm256_loadu_ps(group.scales + 8 * b), acc)
        }
        return acc
    }

#endif
