// The Q6_K products of batches in the AVX-512 VNNI build, sixteen activation rows per register (Q8_KLanesVNNI.swift):
// a weight super-block is unpacked once into its 256 unsigned 6-bit values as bytes; four `vpdpbusd` steps make a
// 16-value sub-block's integer sum for sixteen rows, which is multiplied by the sub-block's scale, and the −32 offset
// comes off as 32 · Σ scale · (the rows' sub-block sums), with `pmaddwd`.
//
// These are the integer sums `dotQ6_KTiled` (Kernels/Q6_K.swift) forms per super-block, in another order (integer
// sums are exact), and its float accumulation, sixteen rows at a time: the same values bit for bit as every other
// build. Q6_KX86.swift sends batches of at least `q6_KTiledMinimumBatch` rows here in this build.

#if arch(x86_64) && SANAD_KERNEL_BUILD_AVX512VNNI
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// One Q6_K weight row's part of `productsVNNI` (`dotQ6_KTiled`): per super-block the integer sum
    /// Σ scale · (sub-block sum) − 32 · Σ scale · (activation sub-block sum), then `acc = fma(dw · sum, da, acc)`.
    struct RowQ6_KVNNI: RowVNNI {
        static var stepsPerSubBlock: Int { 4 }
        var weights: WeightRowVNNI
        var acc = _mm512_setzero_ps()
        var total = _mm512_setzero_si512()

        @inline(__always)
        init(_ weights: WeightRowVNNI) { self.weights = weights }

        @inline(__always)
        mutating func start(_ b: Int, _ lanes: Q8_KLanesVNNI) {
            weights.block = weights.row + b * q6_KBlockBytes
            let out = UnsafeMutableRawPointer(weights.unpackTarget)
            for c in 0..<8 {
                _mm256_storeu_si256(
                    (out + 32 * c).assumingMemoryBound(to: __m256i.self), unpackChunkQ6_K(weights.block, c))
            }
            total = _mm512_setzero_si512()
        }

        /// The chunk's two sub-block sums times their scales (2c and 2c + 1) into the super-block's sum.
        @inline(__always)
        mutating func endChunk(_ c: Int, _ b: Int, _ lanes: Q8_KLanesVNNI) {
            let scales = (weights.block + 192).assumingMemoryBound(to: Int8.self)
            total = _mm512_add_epi32(total, weights.sums.scaled(Int32(scales[2 * c]), Int32(scales[2 * c + 1])))
        }

        /// The offset 32 · Σ scale · sum off (the lanes' 16-value sum pairs), then `acc = fma(dw · sum, da, acc)`.
        @inline(__always)
        mutating func endSuperBlock(_ b: Int, _ lanes: Q8_KLanesVNNI) {
            let scales = (weights.block + 192).assumingMemoryBound(to: Int8.self)
            let sixteens = UnsafeRawPointer(lanes.sixteens + 128 * b)
            var offsets = _mm512_setzero_si512()
            for k in 0..<8 {
                let pair = halfPair(32 * Int32(scales[2 * k]), 32 * Int32(scales[2 * k + 1]))
                offsets = _mm512_add_epi32(
                    offsets, _mm512_madd_epi16(_mm512_load_si512(sixteens + 64 * k), _mm512_set1_epi32(pair)))
            }
            let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(total, offsets))
            let dw = _mm512_set1_ps(_cvtsh_ss(weights.block.loadUnaligned(fromByteOffset: 208, as: UInt16.self)))
            acc = _mm512_fmadd_ps(_mm512_mul_ps(dw, sum), _mm512_loadu_ps(lanes.scales + 16 * b), acc)
        }

        var result: __m512 { acc }
    }

#endif
