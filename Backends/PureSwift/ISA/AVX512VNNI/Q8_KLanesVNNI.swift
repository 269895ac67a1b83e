// What the AVX-512 VNNI build's K-quant kernels (Q4_KVNNI.swift, Q6_KVNNI.swift) share: up to sixteen Q8_K
// activation rows laid out one per 32-bit lane of a 512-bit register, the loop that takes a matrix four weight rows
// at a time against each such group, and the integer sums of two sub-blocks, four values per `vpdpbusd`.
//
// A group's quants are copied transposed in four-byte steps: the 64 bytes at step k hold quants 4k ..< 4k + 4 of
// each of the sixteen rows. A weight super-block is unpacked once into bytes in value order; four of them broadcast
// to every lane, and `vpdpbusd` (unsigned weight bytes times signed activation bytes, the four products added into
// each 32-bit lane) adds one step of all sixteen rows in one instruction, with no horizontal sums.

#if arch(x86_64) && SANAD_KERNEL_BUILD_AVX512VNNI
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// Rows `rows` of the K-quant matrix `w` times activation rows `0 ..< count` of `x`, into
    /// `out[b · outStride + r]`: the activation rows gathered sixteen at a time (`Q8_KLanesVNNI`), and four weight
    /// rows at a time given to `products(rows, lanes, unpacked, results)` (`productsVNNI` of the type's rows), which
    /// leaves weight row j's sixteen results at `results + 16j` (`unpacked`: 1024 bytes of scratch). A last pass of
    /// fewer weight rows repeats its last row, whose results are dropped. (The row type comes in a closure, not as a
    /// generic parameter: called generically through the closure of the scratch allocation, the compiler left
    /// `productsVNNI` unspecialized, the intrinsics out of line, five times slower.)
    @inline(__always)
    func multiplyLanesVNNI(
        _ w: WeightMatrix, _ x: QuantizedActivations, count: Int, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int,
        _ products: (
            (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), Q8_KLanesVNNI,
            UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Float>
        ) -> Void
    ) {
        let scratchBytes = Q8_KLanesVNNI.bytes(columns: w.columns) + 4 * 256 + 4 * 64 + 64
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: scratchBytes) { scratch in
            guard let base = scratch.baseAddress else { return }
            // 64-byte alignment for the lane vectors (the allocation is at least 16-aligned).
            let aligned = UnsafeMutableRawPointer(base).alignedUp(toMultipleOf: 64)
            let lanes = Q8_KLanesVNNI(scratch: aligned, columns: w.columns)
            let unpacked = (aligned + Q8_KLanesVNNI.bytes(columns: w.columns)).assumingMemoryBound(to: UInt8.self)
            let results = UnsafeMutableRawPointer(unpacked + 4 * 256).assumingMemoryBound(to: Float.self)
            for first in stride(from: 0, to: count, by: 16) {
                let rowsInGroup = min(16, count - first)
                lanes.gather(x, first: first, count: rowsInGroup)
                for r in stride(from: rows.lowerBound, to: rows.upperBound, by: 4) {
                    let last = rows.upperBound - 1
                    products(
                        (w.row(r), w.row(min(r + 1, last)), w.row(min(r + 2, last)), w.row(min(r + 3, last))), lanes,
                        unpacked, results)
                    for j in 0..<min(4, rows.upperBound - r) {
                        for i in 0..<rowsInGroup { out[(first + i) * outStride + r + j] = results[16 * j + i] }
                    }
                }
            }
        }
    }

    /// One weight row of a K-quant matrix in `productsVNNI`: where it is, its current super-block unpacked, and the
    /// current chunk's two sub-block sums.
    struct WeightRowVNNI {
        let row: UnsafeRawPointer
        /// The current super-block's weights as bytes, in value order (256 bytes of scratch).
        let unpacked: UnsafeRawPointer
        /// The current super-block.
        var block: UnsafeRawPointer
        var sums = SubBlockPairVNNI()

        @inline(__always)
        init(_ row: UnsafeRawPointer, _ unpacked: UnsafeMutablePointer<UInt8>) {
            self.row = row
            self.unpacked = UnsafeRawPointer(unpacked)
            block = row
        }

        /// The scratch the super-block is unpacked into.
        var unpackTarget: UnsafeMutablePointer<UInt8> {
            UnsafeMutablePointer(mutating: unpacked.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// A K-quant type's part of `productsVNNI` for one weight row: its float sums over sixteen lanes and what its
    /// super-blocks need between the steps.
    protocol RowVNNI {
        /// Steps (four values each) per sub-block: a chunk of the super-block is two sub-blocks, stepped together.
        static var stepsPerSubBlock: Int { get }
        var weights: WeightRowVNNI { get set }
        init(_ weights: WeightRowVNNI)
        /// Super-block `b` begins: `weights.block` set, the weights to be unpacked.
        mutating func start(_ b: Int, _ lanes: Q8_KLanesVNNI)
        /// Chunk `c` of super-block `b` ends (`weights.sums` holds its two sub-blocks).
        mutating func endChunk(_ c: Int, _ b: Int, _ lanes: Q8_KLanesVNNI)
        /// Super-block `b` ends.
        mutating func endSuperBlock(_ b: Int, _ lanes: Q8_KLanesVNNI)
        /// The sixteen lanes' results.
        var result: __m512 { get }
    }

    /// Four weight rows of type `R` times the sixteen rows of `lanes`: row j's sixteen results at `results + 16j`.
    /// `unpacked` is 1024 bytes of scratch.
    @inline(__always)
    func productsVNNI<R: RowVNNI>(
        _ type: R.Type, _ rows: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer),
        _ lanes: Q8_KLanesVNNI, unpacked: UnsafeMutablePointer<UInt8>, results: UnsafeMutablePointer<Float>
    ) {
        var r0 = R(WeightRowVNNI(rows.0, unpacked))
        var r1 = R(WeightRowVNNI(rows.1, unpacked + 256))
        var r2 = R(WeightRowVNNI(rows.2, unpacked + 512))
        var r3 = R(WeightRowVNNI(rows.3, unpacked + 768))
        let n = R.stepsPerSubBlock
        for b in 0..<lanes.columns / 256 {
            r0.start(b, lanes)
            r1.start(b, lanes)
            r2.start(b, lanes)
            r3.start(b, lanes)
            let steps = UnsafeRawPointer(lanes.quants) + 64 * 64 * b
            // `lanes.chunks` is 4; a bound the compiler cannot see keeps this loop a loop (unrolled, it hoisted all
            // the broadcasts and spilled them).
            for c in 0..<lanes.chunks * 8 / n {
                r0.weights.sums = SubBlockPairVNNI()
                r1.weights.sums = SubBlockPairVNNI()
                r2.weights.sums = SubBlockPairVNNI()
                r3.weights.sums = SubBlockPairVNNI()
                for i in 0..<n {
                    let kLow = 2 * n * c + i
                    let kHigh = kLow + n
                    let aLow = _mm512_load_si512(steps + 64 * kLow)
                    let aHigh = _mm512_load_si512(steps + 64 * kHigh)
                    r0.weights.sums.step(r0.weights.unpacked, kLow, aLow, kHigh, aHigh)
                    r1.weights.sums.step(r1.weights.unpacked, kLow, aLow, kHigh, aHigh)
                    r2.weights.sums.step(r2.weights.unpacked, kLow, aLow, kHigh, aHigh)
                    r3.weights.sums.step(r3.weights.unpacked, kLow, aLow, kHigh, aHigh)
                }
                r0.endChunk(c, b, lanes)
                r1.endChunk(c, b, lanes)
                r2.endChunk(c, b, lanes)
                r3.endChunk(c, b, lanes)
            }
            r0.endSuperBlock(b, lanes)
            r1.endSuperBlock(b, lanes)
            r2.endSuperBlock(b, lanes)
            r3.endSuperBlock(b, lanes)
        }
        _mm512_storeu_ps(results, r0.result)
        _mm512_storeu_ps(results + 16, r1.result)
        _mm512_storeu_ps(results + 32, r2.result)
        _mm512_storeu_ps(results + 48, r3.result)
    }

    /// The integer sums, per lane, of two sub-blocks of one weight row: `low` and `high`, four values per step.
    struct SubBlockPairVNNI {
        var low = _mm512_setzero_si512()
        var high = _mm512_setzero_si512()

        /// Steps `kLow` of the first sub-block and `kHigh` of the second (four weight bytes each at `unpacked`)
        /// against their activation steps `aLow` and `aHigh`.
        @inline(__always)
        mutating func step(
            _ unpacked: UnsafeRawPointer, _ kLow: Int, _ aLow: __m512i, _ kHigh: Int, _ aHigh: __m512i
        ) {
            low = dotBytesVNNI512(low, broadcastStep(unpacked, kLow), aLow)
            high = dotBytesVNNI512(high, broadcastStep(unpacked, kHigh), aHigh)
        }

        /// `low · scaleLow + high · scaleHigh` per lane.
        @inline(__always)
        func scaled(_ scaleLow: Int32, _ scaleHigh: Int32) -> __m512i {
            _mm512_add_epi32(
                _mm512_mullo_epi32(low, _mm512_set1_epi32(scaleLow)),
                _mm512_mullo_epi32(high, _mm512_set1_epi32(scaleHigh)))
        }
    }

    /// `low` and `high` as the two 16-bit halves of one 32-bit lane (each within ±32767: sums of at most 32 quants).
    @inline(__always)
    func halfPair(_ low: Int32, _ high: Int32) -> Int32 {
        Int32(bitPattern: UInt32(UInt16(truncatingIfNeeded: low)) | UInt32(UInt16(truncatingIfNeeded: high)) << 16)
    }

    /// Bytes 4k ..< 4k + 4 at `bytes` in every 32-bit lane.
    @inline(__always)
    func broadcastStep(_ bytes: UnsafeRawPointer, _ k: Int) -> __m512i {
        _mm512_set1_epi32(bytes.loadUnaligned(fromByteOffset: 4 * k, as: Int32.self))
    }

    /// `vpdpbusd` on 512 bits: `s` plus, per 32-bit lane, the four products of `a`'s unsigned bytes and `b`'s signed
    /// bytes (the masked form with every lane selected, as `dotBytesVNNI`).
    @inline(__always)
    func dotBytesVNNI512(_ s: __m512i, _ a: __m512i, _ b: __m512i) -> __m512i {
        _mm512_mask_dpbusd_epi32(s, 0xFFFF, a, b)
    }

    /// Up to sixteen Q8_K activation rows in 64-byte-aligned scratch memory, one row per 32-bit lane. A group of fewer
    /// rows repeats its last row (the kernels drop those lanes).
    struct Q8_KLanesVNNI {
        /// Step k (four quants) of super-block b at `quants + 64(64b + k)`: row i's quants 256b + 4k ..< 256b + 4k + 4
        /// in bytes 4i ..< 4i + 4.
        let quants: UnsafeMutablePointer<Int8>
        /// `scales[16b + i]`: row i's scale of super-block b.
        let scales: UnsafeMutablePointer<Float>
        /// `pairs[64b + 16g + i]`: row i's sums of the quants 64g ..< 64g + 32 and 64g + 32 ..< 64g + 64 of
        /// super-block b, as two 16-bit halves (low, high), so that one `pmaddwd` weights them by two 32-value
        /// sub-blocks' mins (Q4_K).
        let pairs: UnsafeMutablePointer<Int32>
        /// `sixteens[128b + 16k + i]`: row i's sums of the quants 32k ..< 32k + 16 and 32k + 16 ..< 32k + 32 of
        /// super-block b as two 16-bit halves, for two 16-value sub-blocks' scales (Q6_K).
        let sixteens: UnsafeMutablePointer<Int32>
        let columns: Int
        /// 64-value chunks per super-block: 4, a value the compiler cannot see (see `productsVNNI`).
        let chunks: Int

        /// Scratch bytes for rows of `columns` values.
        static func bytes(columns: Int) -> Int { 16 * columns + (64 + 256 + 512) * (columns / 256) }

        /// A group in the scratch memory at `scratch` (64-byte aligned, `bytes(columns:)` bytes).
        init(scratch: UnsafeMutableRawPointer, columns: Int) {
            let superBlocks = columns / 256
            quants = scratch.bindMemory(to: Int8.self, capacity: 16 * columns)
            scales = (scratch + 16 * columns).bindMemory(to: Float.self, capacity: 16 * superBlocks)
            pairs = (scratch + 16 * columns + 64 * superBlocks).bindMemory(to: Int32.self, capacity: 64 * superBlocks)
            sixteens = (scratch + 16 * columns + 320 * superBlocks).bindMemory(
                to: Int32.self, capacity: 128 * superBlocks)
            self.columns = columns
            chunks = min(4, columns / 64)  // columns is a multiple of 256
        }

        /// Gathers rows `first ..< first + count` (count 1…16) of `x`.
        func gather(_ x: QuantizedActivations, first: Int, count: Int) {
            let superBlocks = columns / 256
            let steps = UnsafeMutableRawPointer(quants).assumingMemoryBound(to: Int32.self)
            for i in 0..<16 {
                let a = x.row(first + min(i, count - 1))
                let source = UnsafeRawPointer(a.quants).assumingMemoryBound(to: Int32.self)
                for k in 0..<columns / 4 { steps[16 * k + i] = source[k] }
                for b in 0..<superBlocks {
                    scales[16 * b + i] = a.scales[b]
                    let s = a.blockSums + 16 * b
                    for g in 0..<4 {
                        pairs[64 * b + 16 * g + i] = halfPair(s[4 * g] &+ s[4 * g + 1], s[4 * g + 2] &+ s[4 * g + 3])
                    }
                    for k in 0..<8 { sixteens[128 * b + 16 * k + i] = halfPair(s[2 * k], s[2 * k + 1]) }
                }
            }
        }
    }

#endif
