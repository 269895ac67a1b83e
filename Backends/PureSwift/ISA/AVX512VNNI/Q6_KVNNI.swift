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

    /// `dotQ6_KTiled` of four Q6_K rows with the sixteen rows of `lanes`: row j's sixteen results at
    /// `results + 16j`. `unpacked` is 1024 bytes of scratch.
    @inline(__always)
    func productsQ6_KVNNI(
        _ rows: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), _ lanes: Q8_KLanesVNNI,
        unpacked: UnsafeMutablePointer<UInt8>, results: UnsafeMutablePointer<Float>
    ) {
        var r0 = RowQ6_KVNNI(rows.0, unpacked)
        var r1 = RowQ6_KVNNI(rows.1, unpacked + 256)
        var r2 = RowQ6_KVNNI(rows.2, unpacked + 512)
        var r3 = RowQ6_KVNNI(rows.3, unpacked + 768)
        for b in 0..<lanes.columns / 256 {
            r0.start(b)
            r1.start(b)
            r2.start(b)
            r3.start(b)
            let steps = UnsafeRawPointer(lanes.quants) + 64 * 64 * b
            // 32-value chunks: 8, from a bound the compiler cannot see (see `productsQ4_KVNNI`).
            for c in 0..<2 * lanes.chunks {
                r0.sums = SubBlockPairVNNI()
                r1.sums = SubBlockPairVNNI()
                r2.sums = SubBlockPairVNNI()
                r3.sums = SubBlockPairVNNI()
                for i in 0..<4 {
                    let kLow = 8 * c + i
                    let kHigh = kLow + 4
                    let aLow = _mm512_load_si512(steps + 64 * kLow)
                    let aHigh = _mm512_load_si512(steps + 64 * kHigh)
                    r0.sums.step(r0.unpacked, kLow, aLow, kHigh, aHigh)
                    r1.sums.step(r1.unpacked, kLow, aLow, kHigh, aHigh)
                    r2.sums.step(r2.unpacked, kLow, aLow, kHigh, aHigh)
                    r3.sums.step(r3.unpacked, kLow, aLow, kHigh, aHigh)
                }
                r0.addChunk(c)
                r1.addChunk(c)
                r2.addChunk(c)
                r3.addChunk(c)
            }
            let sixteens = UnsafeRawPointer(lanes.sixteens + 128 * b)
            let da = _mm512_loadu_ps(lanes.scales + 16 * b)
            r0.finish(sixteens, da)
            r1.finish(sixteens, da)
            r2.finish(sixteens, da)
            r3.finish(sixteens, da)
        }
        _mm512_storeu_ps(results, r0.acc)
        _mm512_storeu_ps(results + 16, r1.acc)
        _mm512_storeu_ps(results + 32, r2.acc)
        _mm512_storeu_ps(results + 48, r3.acc)
    }

    /// One weight row's part of `productsQ6_KVNNI`: its float sums over sixteen lanes, the current super-block's
    /// scaled integer sums, and the current 32-value chunk's two sub-block sums.
    struct RowQ6_KVNNI {
        let row: UnsafeRawPointer
        /// The current super-block's weights as bytes 0…63 (256 bytes of scratch).
        let unpacked: UnsafeRawPointer
        var block: UnsafeRawPointer
        var acc = _mm512_setzero_ps()
        var total = _mm512_setzero_si512()
        var sums = SubBlockPairVNNI()

        @inline(__always)
        init(_ row: UnsafeRawPointer, _ unpacked: UnsafeMutablePointer<UInt8>) {
            self.row = row
            self.unpacked = UnsafeRawPointer(unpacked)
            block = row
        }

        /// Super-block `b`: its weights unpacked, its integer sum cleared.
        @inline(__always)
        mutating func start(_ b: Int) {
            block = row + b * q6_KBlockBytes
            let out = UnsafeMutableRawPointer(mutating: unpacked)
            for c in 0..<8 {
                _mm256_storeu_si256((out + 32 * c).assumingMemoryBound(to: __m256i.self), unpackChunkQ6_K(block, c))
            }
            total = _mm512_setzero_si512()
        }

        /// Chunk `c`'s two sub-block sums times their scales (2c and 2c + 1) into the super-block's sum.
        @inline(__always)
        mutating func addChunk(_ c: Int) {
            let scales = (block + 192).assumingMemoryBound(to: Int8.self)
            total = _mm512_add_epi32(total, sums.scaled(Int32(scales[2 * c]), Int32(scales[2 * c + 1])))
        }

        /// The end of the super-block: the offset 32 · Σ scale · sum off (`sixteens`: the lanes' sub-block sum
        /// pairs), then `acc = fma(dw · sum, da, acc)`.
        @inline(__always)
        mutating func finish(_ sixteens: UnsafeRawPointer, _ da: __m512) {
            let scales = (block + 192).assumingMemoryBound(to: Int8.self)
            var offsets = _mm512_setzero_si512()
            for k in 0..<8 {
                let pair = halfPair(32 * Int32(scales[2 * k]), 32 * Int32(scales[2 * k + 1]))
                offsets = _mm512_add_epi32(
                    offsets, _mm512_madd_epi16(_mm512_load_si512(sixteens + 64 * k), _mm512_set1_epi32(pair)))
            }
            let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(total, offsets))
            let dw = _mm512_set1_ps(_cvtsh_ss(block.loadUnaligned(fromByteOffset: 208, as: UInt16.self)))
            acc = _mm512_fmadd_ps(_mm512_mul_ps(dw, sum), da, acc)
        }
    }

#endif
