// The Q4_K products of batches in the AVX-512 VNNI build, sixteen activation rows per register (Q8_KLanesVNNI.swift):
// a weight super-block is unpacked once into its 256 nibbles as bytes; eight `vpdpbusd` steps make a 32-value
// sub-block's integer sum for sixteen rows, which is multiplied by the sub-block's scale, and the mins come from the
// rows' sub-block sums with one `pmaddwd`.
//
// These are the integer sums `dotQ4_KGrouped` (Kernels/Q4_K.swift) forms, in another order (integer sums are exact),
// and the float accumulation is that function's, per 64-value chunk, sixteen rows at a time: the same values bit for
// bit as every other build. Q4_KX86.swift sends the grouped activation rows here in this build.

#if arch(x86_64) && SANAD_KERNEL_BUILD_AVX512VNNI
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// The activation rows `0 ..< grouped` of `multiplyRowsQ4_KX86`, sixteen at a time, four weight rows at a time.
    func multiplyGroupedRowsQ4_KVNNI(
        _ w: WeightMatrix, _ x: QuantizedActivations, grouped: Int, rows: Range<Int>,
        out: UnsafeMutablePointer<Float>, outStride: Int
    ) {
        multiplyLanesVNNI(w, x, count: grouped, rows: rows, out: out, outStride: outStride) {
            productsQ4_KVNNI($0, $1, unpacked: $2, results: $3)
        }
    }

    /// `dotQ4_KGrouped` of four Q4_K rows with the sixteen rows of `lanes`: row j's sixteen results at
    /// `results + 16j`. `unpacked` is 1024 bytes of scratch.
    @inline(__always)
    func productsQ4_KVNNI(
        _ rows: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), _ lanes: Q8_KLanesVNNI,
        unpacked: UnsafeMutablePointer<UInt8>, results: UnsafeMutablePointer<Float>
    ) {
        var r0 = RowQ4_KVNNI(rows.0, unpacked)
        var r1 = RowQ4_KVNNI(rows.1, unpacked + 256)
        var r2 = RowQ4_KVNNI(rows.2, unpacked + 512)
        var r3 = RowQ4_KVNNI(rows.3, unpacked + 768)
        for b in 0..<lanes.columns / 256 {
            let da = _mm512_loadu_ps(lanes.scales + 16 * b)
            r0.start(b, da)
            r1.start(b, da)
            r2.start(b, da)
            r3.start(b, da)
            let steps = UnsafeRawPointer(lanes.quants) + 64 * 64 * b
            // `lanes.chunks` is 4; a bound the compiler cannot see keeps this loop a loop (unrolled, it hoisted all
            // the broadcasts and spilled them).
            for g in 0..<lanes.chunks {
                r0.sums = SubBlockPairVNNI()
                r1.sums = SubBlockPairVNNI()
                r2.sums = SubBlockPairVNNI()
                r3.sums = SubBlockPairVNNI()
                for c in 0..<8 {
                    let kLow = 16 * g + c
                    let kHigh = kLow + 8
                    let aLow = _mm512_load_si512(steps + 64 * kLow)
                    let aHigh = _mm512_load_si512(steps + 64 * kHigh)
                    r0.sums.step(r0.unpacked, kLow, aLow, kHigh, aHigh)
                    r1.sums.step(r1.unpacked, kLow, aLow, kHigh, aHigh)
                    r2.sums.step(r2.unpacked, kLow, aLow, kHigh, aHigh)
                    r3.sums.step(r3.unpacked, kLow, aLow, kHigh, aHigh)
                }
                let sums = _mm512_load_si512(UnsafeRawPointer(lanes.pairs + 64 * b + 16 * g))
                r0.finish(g, sums)
                r1.finish(g, sums)
                r2.finish(g, sums)
                r3.finish(g, sums)
            }
        }
        _mm512_storeu_ps(results, r0.result)
        _mm512_storeu_ps(results + 16, r1.result)
        _mm512_storeu_ps(results + 32, r2.result)
        _mm512_storeu_ps(results + 48, r3.result)
    }

    /// One weight row's part of `productsQ4_KVNNI`: its float sums over sixteen lanes, and the integer sums of the
    /// current 64-value chunk's two sub-blocks.
    struct RowQ4_KVNNI {
        let row: UnsafeRawPointer
        /// The current super-block's weights as bytes (256 bytes of scratch).
        let unpacked: UnsafeRawPointer
        var block: UnsafeRawPointer
        var d = _mm512_setzero_ps()
        var dmin = _mm512_setzero_ps()
        var acc = _mm512_setzero_ps()
        var accMin = _mm512_setzero_ps()
        var sums = SubBlockPairVNNI()

        @inline(__always)
        init(_ row: UnsafeRawPointer, _ unpacked: UnsafeMutablePointer<UInt8>) {
            self.row = row
            self.unpacked = UnsafeRawPointer(unpacked)
            block = row
        }

        /// Super-block `b`, whose activation scales are `da`.
        @inline(__always)
        mutating func start(_ b: Int, _ da: __m512) {
            block = row + b * q4_KBlockBytes
            unpackNibblesQ4_K(block, into: UnsafeMutablePointer(mutating: unpacked.assumingMemoryBound(to: UInt8.self)))
            d = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(block.loadUnaligned(as: UInt16.self))), da)
            dmin = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(block.loadUnaligned(fromByteOffset: 2, as: UInt16.self))), da)
        }

        /// The end of chunk `g`: the scaled integer sums and the mins (`blockSums`: the lanes' sub-block sum pairs)
        /// into the float sums.
        @inline(__always)
        mutating func finish(_ g: Int, _ blockSums: __m512i) {
            let (sLow, mLow) = scaleMinQ4_KX86(2 * g, block)
            let (sHigh, mHigh) = scaleMinQ4_KX86(2 * g + 1, block)
            let products = sums.scaled(Int32(sLow), Int32(sHigh))
            let mins = _mm512_madd_epi16(blockSums, _mm512_set1_epi32(halfPair(Int32(mLow), Int32(mHigh))))
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(products), d, acc)
            accMin = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mins), dmin, accMin)
        }

        var result: __m512 { _mm512_sub_ps(acc, accMin) }
    }

    /// The 256 weights of the Q4_K super-block at `block` as bytes 0…15, in value order: per 32 bytes of nibbles,
    /// the low nibbles are values 64g ..< 64g + 32 and the high nibbles the next 32.
    @inline(__always)
    func unpackNibblesQ4_K(_ block: UnsafeRawPointer, into out: UnsafeMutablePointer<UInt8>) {
        let mask = _mm256_set1_epi8(0x0F)
        for g in 0..<4 {
            let raw = _mm256_loadu_si256((block + 16 + 32 * g).assumingMemoryBound(to: __m256i.self))
            let target = UnsafeMutableRawPointer(out + 64 * g)
            _mm256_storeu_si256(target.assumingMemoryBound(to: __m256i.self), _mm256_and_si256(raw, mask))
            _mm256_storeu_si256(
                (target + 32).assumingMemoryBound(to: __m256i.self),
                _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask))
        }
    }

#endif
