// The Q4_1 products for paired-layout rows (Kernels/Q4_1Paired.swift) with the x86 instructions llama.cpp's AVX2
// kernel uses: `pmaddubsw` multiplies the 32 unsigned weight bytes of a block by its 32 signed activation bytes and
// adds neighbouring products (16-bit lanes), `pmaddwd` by ones adds neighbouring lanes (eight 32-bit sums of four
// products), which convert to floats and accumulate with the block's scale product. Four vector instructions per
// block and activation row where the portable kernel needs about nine; the values are the same bit for bit.
//
// The x86 builds' `BuiltKernels.multiplyRows` sends paired-layout Q4_1 matrices here; other builds (portable, arm64)
// run the portable kernels of Q4_1Paired.swift, which compute the same values. Compiled in the AVX2 and AVX-512
// builds only (this file is linked into every ISA folder); the intrinsics are the compiler's own (clang's
// `_Builtin_intrinsics` module), inlined for the build's `-target-cpu`.

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Block `block` of a paired-layout row as 32 weight bytes, in order (the pair's bytes shifted right by 0 or 4).
    /// Unpacking each block on its own keeps one weight register live instead of two.
    @inline(__always)
    func unpackBlockBytes(_ row: UnsafeRawPointer, block: Int) -> __m256i {
        let v = _mm256_loadu_si256((row + (block >> 1) * 32).assumingMemoryBound(to: __m256i.self))
        let shift = _mm_cvtsi32_si128(Int32(truncatingIfNeeded: (block & 1) << 2))
        return _mm256_and_si256(_mm256_srl_epi16(v, shift), _mm256_set1_epi8(0x0F))
    }

    /// Block pair `pair` of a paired-layout row as two blocks of 32 weight bytes, in order.
    @inline(__always)
    func unpackPairBytes(_ row: UnsafeRawPointer, pair: Int) -> (__m256i, __m256i) {
        let v = _mm256_loadu_si256((row + pair * 32).assumingMemoryBound(to: __m256i.self))
        let mask = _mm256_set1_epi8(0x0F)
        return (_mm256_and_si256(v, mask), _mm256_and_si256(_mm256_srli_epi16(v, 4), mask))
    }

    /// ggml's eight lane sums of one block (`mul_sum_us8_pairs_float`): weight bytes `w` times the 32 int8
    /// activations at `a`, lane l summing elements 4l…4l+3, as floats.
    @inline(__always)
    func blockLaneSums(_ w: __m256i, _ a: UnsafePointer<Int8>) -> __m256 {
        let y = _mm256_loadu_si256(UnsafeRawPointer(a).assumingMemoryBound(to: __m256i.self))
        return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(w, y), _mm256_set1_epi16(1)))
    }

    /// Rows `rows` of the paired-layout Q4_1 matrix `w` times every activation row of `x` (Q8_1), into
    /// `out[b · outStride + r]`: `multiplyRows` for this layout, each product bit for bit `dotQ4_1Paired`'s.
    ///
    /// Activation rows go in groups of eight (a last group of four to seven runs padded, `QuantizedActivations`'s
    /// zero rows). A group's quants (8 × columns bytes) stay in the first-level cache while every weight row of the
    /// range passes: each weight block is unpacked once for the eight rows, and the scale products and offsets of
    /// the eight rows are formed eight lanes at a time from the block-major scales and sums. Fewer than four
    /// activation rows (generation: one) go one at a time (`X86Q4_1Pairs`).
    func multiplyRowsQ4_1PairedX86(
        _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int
    ) {
        let blocks = w.columns / 32
        let batch = x.rows
        let groups = batch / 8 + (batch % 8 >= 4 ? 1 : 0)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 10 * blocks + 8) { scratch in
            let ds = scratch.baseAddress!  // ds[8b + i]: scale product of block b, activation row i
            let dw = ds + 8 * blocks
            let mw = dw + blocks
            let results = mw + blocks
            for g in 0..<groups {
                let first = 8 * g
                for r in rows {
                    let row = w.row(r)
                    halvesToFloats(
                        UnsafeRawPointer(row + blocks * 16).assumingMemoryBound(to: UInt16.self), dw, count: blocks)
                    halvesToFloats(
                        UnsafeRawPointer(row + blocks * 18).assumingMemoryBound(to: UInt16.self), mw, count: blocks)
                    groupScaleProducts(x, first: first, blocks: blocks, dw: dw, into: ds)
                    let offsets = groupProducts(
                        row, x.row(first).quants, rowStride: x.columns, blocks: blocks, ds: ds, mw: mw,
                        sums: x.sumsByBlock + first, sumStride: x.paddedRows, into: results)
                    let sums = UnsafeRawPointer(results).loadUnaligned(as: SIMD8<Float>.self) + offsets
                    for i in 0..<min(8, batch - first) { out[(first + i) * outStride + r] = sums[i] }
                }
            }
            for b in min(8 * groups, batch)..<batch {
                let a = x.row(b)
                for r in rows {
                    out[b * outStride + r] = dotQ4_1Paired(w.row(r), a, count: w.columns, products: X86Q4_1Pairs.self)
                }
            }
        }
    }

    /// Block products with `pmaddubsw` (`dotQ4_1Paired<X86Q4_1Pairs>`: one weight row times one activation row, as
    /// in generation; four weight rows at once give independent chains of additions and run faster from cache,
    /// but slower from memory, where generation reads its weights).
    enum X86Q4_1Pairs: Q4_1PairProducts {
        @inline(__always)
        static func unpack(_ row: UnsafeRawPointer, pair: Int) -> (__m256i, __m256i) {
            unpackPairBytes(row, pair: pair)
        }

        @inline(__always)
        static func laneSums(_ pair: (__m256i, __m256i), second: Bool, _ a: ActivationRow, block: Int) -> SIMD8<Float> {
            blockLaneSums(second ? pair.1 : pair.0, a.quants + block * 32)
        }
    }

    /// For activation rows `first ..< first + 8` and a weight row whose scales are `dw`: the scale products
    /// `ds[8b + i] = dw[b] · d(row i, block b)`.
    @inline(__always)
    func groupScaleProducts(
        _ x: QuantizedActivations, first: Int, blocks: Int, dw: UnsafePointer<Float>,
        into ds: UnsafeMutablePointer<Float>
    ) {
        let scales = x.scalesByBlock + first
        let stride = x.paddedRows
        for b in 0..<blocks {
            _mm256_storeu_ps(ds + 8 * b, _mm256_mul_ps(_mm256_set1_ps(dw[b]), _mm256_loadu_ps(scales + b * stride)))
        }
    }

    /// The block products of one weight row and eight activation rows (quants at `q`, `rowStride` apart), with the
    /// scale products `ds`: each row's horizontal sum into `results[i]`. Returns the eight rows' offset terms
    /// `Σ_b mw[b] · s(row i, block b)` (block sums `s` block-major at `sums`), accumulated in block order as
    /// `dotQ4_1Paired` does; their chain of fused multiply-adds runs alongside the products.
    @inline(__always)
    func groupProducts(
        _ row: UnsafeRawPointer, _ q: UnsafePointer<Int8>, rowStride: Int, blocks: Int, ds: UnsafePointer<Float>,
        mw: UnsafePointer<Float>, sums: UnsafePointer<Float>, sumStride: Int, into results: UnsafeMutablePointer<Float>
    ) -> SIMD8<Float> {
        var offsets = _mm256_setzero_ps()
        var products = EightRowSumsX86()
        for b in 0..<blocks {
            let w = unpackBlockBytes(row, block: b)
            let a = q + 32 * b
            offsets = _mm256_fmadd_ps(_mm256_set1_ps(mw[b]), _mm256_loadu_ps(sums + b * sumStride), offsets)
            products.add(scales: ds + 8 * b) { blockLaneSums(w, a + $0 * rowStride) }
        }
        products.store(into: results)
        return offsets
    }

#endif
