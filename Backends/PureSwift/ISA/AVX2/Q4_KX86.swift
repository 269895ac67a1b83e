// The Q4_K products of batches (`dotQ4_KGrouped`, Kernels/Q4_K.swift) with x86 instructions. For each pair g of
// 32-value sub-blocks, `pmaddubsw` multiplies the unsigned nibbles by the activations and `pmaddwd` by the
// sub-block's scale adds them up, eight rows against one unpacked super-block; `rowSums` turns the eight rows'
// lanes into one vector of the exact integer sums, one lane per row, and the min terms come from the gathered
// block sums with one `pmaddwd` for all eight rows. The float accumulation then runs as `dotQ4_KGrouped`'s, eight
// rows at a time: the same values bit for bit.
//
// The x86 builds' `BuiltKernels.multiplyRows` sends Q4_K matrices here; other builds run Q4_K.swift. Compiled in the
// AVX2 and AVX-512 builds only (this file is linked into every ISA folder).

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Scale and min of sub-block `j` (0..<8) of the Q4_K super-block at `block` (ggml's `get_scale_min_k4`).
    @inline(__always)
    func scaleMinQ4_KX86(_ j: Int, _ block: UnsafeRawPointer) -> (scale: Int16, min: Int16) {
        let q = (block + 4).assumingMemoryBound(to: UInt8.self)
        if j < 4 { return (Int16(q[j] & 63), Int16(q[j + 4] & 63)) }
        return (Int16((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4)), Int16((q[j + 4] >> 4) | ((q[j] >> 6) << 4)))
    }

    /// Rows `rows` of the Q4_K matrix `w` times every activation row of `x` (Q8_K), into `out[b · outStride + r]`:
    /// `multiplyRows` for Q4_K, bit for bit. The activation rows in groups of four (all but the last `batch % 4`)
    /// take `dotQ4_KGrouped`'s rounding and run eight at a time (sixteen in the AVX-512 VNNI build,
    /// ISA/AVX512VNNI/Q4_KVNNI.swift); the rest take `Q4_KRows.dot`'s, one at a time.
    func multiplyRowsQ4_KX86(
        _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int
    ) {
        let batch = x.rows
        let grouped = batch - batch % 4
        if grouped > 0 {
            #if SANAD_KERNEL_BUILD_AVX512VNNI
                multiplyGroupedRowsQ4_KVNNI(w, x, grouped: grouped, rows: rows, out: out, outStride: outStride)
            #else
                multiplyGroupedRowsQ4_KX86(w, x, grouped: grouped, rows: rows, out: out, outStride: outStride)
            #endif
        }
        for b in grouped..<batch {
            let a = x.row(b)
            for r in rows { out[b * outStride + r] = dotQ4_KX86(w.row(r), a, superBlocks: w.columns / 256) }
        }
    }

    /// The activation rows `0 ..< grouped` (a multiple of four) of `multiplyRowsQ4_KX86`, eight at a time.
    func multiplyGroupedRowsQ4_KX86(
        _ w: WeightMatrix, _ x: QuantizedActivations, grouped: Int, rows: Range<Int>,
        out: UnsafeMutablePointer<Float>, outStride: Int
    ) {
        multiplyGroupsQ8_KX86(w, x, count: grouped, rows: rows, out: out, outStride: outStride) {
            groupProductsQ4_K($0, $1)
        }
    }

    /// `Q4_KRows.dot` of one weight row and one activation row (generation): per super-block the whole integer sums,
    /// `acc = fma(Σ products, dw·da, acc)`, `accMin = fma(Σ mins, dmin·da, accMin)`, result `acc − accMin`.
    @inline(__always)
    func dotQ4_KX86(_ row: UnsafeRawPointer, _ a: ActivationRow, superBlocks: Int) -> Float {
        let mask = _mm256_set1_epi8(0x0F)
        var acc: Float = 0
        var accMin: Float = 0
        for b in 0..<superBlocks {
            let block = row + b * q4_KBlockBytes
            let x = a.quants + 256 * b
            let bs = a.blockSums + 16 * b
            var lanes = _mm256_setzero_si256()
            var mins: Int32 = 0
            for g in 0..<4 {
                let raw = _mm256_loadu_si256((block + 16 + 32 * g).assumingMemoryBound(to: __m256i.self))
                let (s1, m1) = scaleMinQ4_KX86(2 * g, block)
                let (s2, m2) = scaleMinQ4_KX86(2 * g + 1, block)
                let low = _mm256_madd_epi16(
                    bytePairProducts(_mm256_and_si256(raw, mask), x + 64 * g), _mm256_set1_epi16(s1))
                let high = _mm256_madd_epi16(
                    bytePairProducts(_mm256_and_si256(_mm256_srli_epi16(raw, 4), mask), x + 64 * g + 32),
                    _mm256_set1_epi16(s2))
                lanes = _mm256_add_epi32(lanes, _mm256_add_epi32(low, high))
                mins &+= Int32(m1) &* (bs[4 * g] &+ bs[4 * g + 1]) &+ Int32(m2) &* (bs[4 * g + 2] &+ bs[4 * g + 3])
            }
            let products = unsafeBitCast(lanes, to: SIMD8<Int32>.self).wrappedSum()
            let da = a.scales[b]
            acc = acc.addingProduct(Float(products), _cvtsh_ss(block.loadUnaligned(as: UInt16.self)) * da)
            accMin = accMin.addingProduct(
                Float(mins), _cvtsh_ss(block.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) * da)
        }
        return acc - accMin
    }

    /// `dotQ4_KGrouped` of one Q4_K row and the eight rows of `group`, lane i for row i.
    @inline(__always)
    func groupProductsQ4_K(_ row: UnsafeRawPointer, _ group: Q8_KGroupX86) -> SIMD8<Float> {
        let mask = _mm256_set1_epi8(0x0F)
        let stride = group.columns
        var acc = _mm256_setzero_ps()
        var accMin = _mm256_setzero_ps()
        for b in 0..<group.columns / 256 {
            let block = row + b * q4_KBlockBytes
            let da = _mm256_loadu_ps(group.scales + 8 * b)
            let d = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(block.loadUnaligned(as: UInt16.self))), da)
            let dmin = _mm256_mul_ps(
                _mm256_set1_ps(_cvtsh_ss(block.loadUnaligned(fromByteOffset: 2, as: UInt16.self))), da)
            let pairs = UnsafeRawPointer(group.pairs + 128 * b)
            for g in 0..<4 {
                let raw = _mm256_loadu_si256((block + 16 + 32 * g).assumingMemoryBound(to: __m256i.self))
                let low = _mm256_and_si256(raw, mask)
                let high = _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask)
                let (s1, m1) = scaleMinQ4_KX86(2 * g, block)
                let (s2, m2) = scaleMinQ4_KX86(2 * g + 1, block)
                let scale1 = _mm256_set1_epi16(s1)
                let scale2 = _mm256_set1_epi16(s2)
                let a = group.quants + 256 * b + 64 * g
                @inline(__always) func rowLanes(_ i: Int) -> __m256i {
                    _mm256_add_epi32(
                        _mm256_madd_epi16(bytePairProducts(low, a + i * stride), scale1),
                        _mm256_madd_epi16(bytePairProducts(high, a + i * stride + 32), scale2))
                }
                let products = rowSums(
                    rowLanes(0), rowLanes(1), rowLanes(2), rowLanes(3), rowLanes(4), rowLanes(5), rowLanes(6),
                    rowLanes(7))
                let sums1 = _mm256_loadu_si256((pairs + 64 * g).assumingMemoryBound(to: __m256i.self))
                let sums2 = _mm256_loadu_si256((pairs + 64 * g + 32).assumingMemoryBound(to: __m256i.self))
                let mins = _mm256_add_epi32(
                    _mm256_madd_epi16(sums1, _mm256_set1_epi16(m1)), _mm256_madd_epi16(sums2, _mm256_set1_epi16(m2)))
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(products), d, acc)
                accMin = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), dmin, accMin)
            }
        }
        return _mm256_sub_ps(acc, accMin)
    }

#endif
