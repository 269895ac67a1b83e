// What the x86 K-quant kernels (Q4_KX86.swift, Q6_KX86.swift) share: eight Q8_K activation rows gathered so that
// one weight super-block, unpacked once, meets all eight, and the reduction of eight rows' integer lanes into one
// vector with a lane per row, so that the float accumulation of the eight rows runs eight lanes at a time.

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Rows `rows` of the K-quant matrix `w` times activation rows `0 ..< count` of `x`, into
    /// `out[b · outStride + r]`: the activation rows gathered eight at a time (`Q8_KGroupX86`), and each weight row's
    /// eight sums from `products(row, group)`.
    @inline(__always)
    func multiplyGroupsQ8_KX86(
        _ w: WeightMatrix, _ x: QuantizedActivations, count: Int, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int, _ products: (UnsafeRawPointer, Q8_KGroupX86) -> SIMD8<Float>
    ) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Q8_KGroupX86.bytes(columns: w.columns) + 32) {
            scratch in
            guard let base = scratch.baseAddress else { return }
            let group = Q8_KGroupX86(scratch: UnsafeMutableRawPointer(base), columns: w.columns)
            let results = UnsafeMutableRawPointer(base + Q8_KGroupX86.bytes(columns: w.columns))
            for first in stride(from: 0, to: count, by: 8) {
                let rowsInGroup = min(8, count - first)
                group.gather(x, first: first, count: rowsInGroup)
                for r in rows {
                    results.storeBytes(of: products(w.row(r), group), as: SIMD8<Float>.self)
                    let sums = results.assumingMemoryBound(to: Float.self)
                    for i in 0..<rowsInGroup { out[(first + i) * outStride + r] = sums[i] }
                }
            }
        }
    }

    /// Eight activation rows of a Q8_K buffer in scratch memory laid out for the x86 K-quant kernels. A group of
    /// fewer rows repeats its last row (the kernels drop those results).
    struct Q8_KGroupX86 {
        /// The quants, row i at `quants + i · columns`.
        let quants: UnsafeMutablePointer<Int8>
        /// `scales[8b + i]`: row i's scale of super-block b.
        let scales: UnsafeMutablePointer<Float>
        /// `pairs[16(8b + j) + 2i + h]`: row i's sum of the 16 quants 16(2j + h) ..< 16(2j + h) + 16 of super-block
        /// b, so that one `pmaddwd` weights sums 2j and 2j + 1 of eight rows at once.
        let pairs: UnsafeMutablePointer<Int16>
        let columns: Int

        /// Scratch bytes for rows of `columns` values.
        static func bytes(columns: Int) -> Int { 8 * columns + 32 * (columns / 256) + 256 * (columns / 256) }

        /// A group in the scratch memory at `scratch` (`bytes(columns:)` bytes).
        init(scratch: UnsafeMutableRawPointer, columns: Int) {
            let superBlocks = columns / 256
            scales = scratch.bindMemory(to: Float.self, capacity: 8 * superBlocks)
            pairs = (scratch + 32 * superBlocks).bindMemory(to: Int16.self, capacity: 128 * superBlocks)
            quants = (scratch + 288 * superBlocks).bindMemory(to: Int8.self, capacity: 8 * columns)
            self.columns = columns
        }

        /// Gathers rows `first ..< first + count` (count 1…8) of `x`.
        func gather(_ x: QuantizedActivations, first: Int, count: Int) {
            let superBlocks = columns / 256
            for i in 0..<8 {
                let a = x.row(first + min(i, count - 1))
                (quants + i * columns).update(from: a.quants, count: columns)
                for b in 0..<superBlocks {
                    scales[8 * b + i] = a.scales[b]
                    for k in 0..<16 {
                        pairs[16 * (8 * b + k / 2) + 2 * i + k % 2] = Int16(truncatingIfNeeded: a.blockSums[16 * b + k])
                    }
                }
            }
        }
    }

    /// The lane sums of eight vectors of eight 32-bit lanes: lane i of the result is the sum of `v.i`'s lanes
    /// (exact, in wrapping integer arithmetic).
    @inline(__always)
    func rowSums(
        _ v0: __m256i, _ v1: __m256i, _ v2: __m256i, _ v3: __m256i, _ v4: __m256i, _ v5: __m256i, _ v6: __m256i,
        _ v7: __m256i
    ) -> __m256i {
        // Per 128-bit half, the sums of rows 0…3 (and 4…7) over that half's four lanes.
        let low = unsafeBitCast(
            _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3)), to: SIMD8<Int32>.self)
        let high = unsafeBitCast(
            _mm256_hadd_epi32(_mm256_hadd_epi32(v4, v5), _mm256_hadd_epi32(v6, v7)), to: SIMD8<Int32>.self)
        return unsafeBitCast(
            SIMD8(lowHalf: low.lowHalf &+ low.highHalf, highHalf: high.lowHalf &+ high.highHalf), to: __m256i.self)
    }

    /// The unsigned weight bytes `w` times 32 int8 activations at `a`, products of neighbouring bytes added
    /// (`pmaddubsw`: sixteen 16-bit lanes; exact while each pair sum stays within ±32767).
    @inline(__always)
    func bytePairProducts(_ w: __m256i, _ a: UnsafePointer<Int8>) -> __m256i {
        _mm256_maddubs_epi16(w, _mm256_loadu_si256(UnsafeRawPointer(a).assumingMemoryBound(to: __m256i.self)))
    }

#endif
