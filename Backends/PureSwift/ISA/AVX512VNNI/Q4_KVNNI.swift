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
            productsVNNI(RowQ4_KVNNI.self, $0, $1, unpacked: $2, results: $3)
        }
    }

    /// One Q4_K weight row's part of `productsVNNI` (`dotQ4_KGrouped`): chunks of 64 values, each accumulated in
    /// float as `acc = fma(Σ products, dw·da, acc)`, `accMin = fma(Σ mins, dmin·da, accMin)`; result `acc − accMin`.
    struct RowQ4_KVNNI: RowVNNI {
        static var stepsPerSubBlock: Int { 8 }
        var weights: WeightRowVNNI
        var d = _mm512_setzero_ps()
        var dmin = _mm512_setzero_ps()
        var acc = _mm512_setzero_ps()
        var accMin = _mm512_setzero_ps()

        @inline(__always)
        init(_ weights: WeightRowVNNI) { self.weights = weights }

        @inline(__always)
        mutating func start(_ b: Int, _ lanes: Q8_KLanesVNNI) {
            weights.block = weights.row + b * q4_KBlockBytes
            let block = weights.block
            unpackNibblesQ4_K(block, into: weights.unpackTarget)
            let da = _mm512_loadu_ps(lanes.scales + 16 * b)
            d = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(block.loadUnaligned(as: UInt16.self))), da)
            dmin = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(block.loadUnaligned(fromByteOffset: 2, as: UInt16.self))), da)
        }

        /// The chunk's scaled integer sums and its mins (from the lanes' sub-block sum pairs) into the float sums.
        @inline(__always)
        mutating func endChunk(_ g: Int, _ b: Int, _ lanes: Q8_KLanesVNNI) {
            let (sLow, mLow) = scaleMinQ4_KX86(2 * g, weights.block)
            let (sHigh, mHigh) = scaleMinQ4_KX86(2 * g + 1, weights.block)
            let products = weights.sums.scaled(Int32(sLow), Int32(sHigh))
            let blockSums = _mm512_load_si512(UnsafeRawPointer(lanes.pairs + 64 * b + 16 * g))
            let mins = _mm512_madd_epi16(blockSums, _mm512_set1_epi32(halfPair(Int32(mLow), Int32(mHigh))))
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(products), d, acc)
            accMin = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mins), dmin, accMin)
        }

        @inline(__always)
        mutating func endSuperBlock(_ b: Int, _ lanes: Q8_KLanesVNNI) {}

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
