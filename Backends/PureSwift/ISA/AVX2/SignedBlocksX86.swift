// The Q5_0 and Q8_0 products (Kernels/Q5_0.swift, Kernels/Q8_0.swift) with the x86 instructions llama.cpp's AVX2
// kernels use. Both formats are blocks of 32 weights with a half scale first, multiplied by Q8_0 activations; a
// block unpacks into 32 signed weight bytes (Q5_0: −16…15, Q8_0: as stored). `psignb` moves each weight's sign onto
// its activation and takes the weight's magnitude, so that `pmaddubsw` (unsigned × signed bytes, neighbouring
// products added) and `pmaddwd` by ones give ggml's eight lane sums of four products (`mul_sum_i8_pairs_float`).
// The sums are exact integers, converted and accumulated as `Q5_0Rows.dot` and `Q8_0Rows.dot` do (LaneBlocks.swift) (`fma(dw·da, lane, acc)`,
// hsum_float_8), so the values are the same bit for bit.
//
// The AVX-512 VNNI build forms the same integer lane sums in one instruction per activation row: `vpdpbusd` adds
// the four products of unsigned and signed bytes into each 32-bit lane. The activations of a group are copied once
// with 128 added (a ^ 0x80: 1…255 for quants within ±127) and the weights stay signed, so a lane gets
// Σ w·(a + 128) = Σ w·a + 128·Σ w; the correction −128·Σ w is the same for the eight rows and starts each row's
// sum (it is computed once per weight block, with `vpdpbusd` too). Exact integers again: the floats do not change.
//
// The x86 builds' `BuiltKernels.multiplyRows` sends Q5_0 and Q8_0 matrices here; other builds run the portable
// kernels. Compiled in the AVX2 and AVX-512 builds only (this file is linked into every ISA folder).

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// A format of 32-weight blocks, each a half scale followed by what unpacks into 32 signed bytes.
    protocol SignedBlocksX86 {
        static var blockBytes: Int { get }
        /// The 32 weights of the block at `block`, in order.
        static func unpack(_ block: UnsafeRawPointer) -> __m256i
    }

    enum Q5_0BlocksX86: SignedBlocksX86 {
        static var blockBytes: Int { q5_0BlockBytes }

        /// ggml's `bytes_from_nibbles_32` and `bytes_from_bits_32`: a weight whose fifth bit is clear gets 0xF0 in
        /// its high nibble, which is value − 16.
        @inline(__always)
        static func unpack(_ block: UnsafeRawPointer) -> __m256i {
            let qs = _mm_loadu_si128((block + 6).assumingMemoryBound(to: __m128i.self))
            let nibbles = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(qs, 4), qs), _mm256_set1_epi8(0x0F))
            let qh = Int32(bitPattern: block.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
            let spread = _mm256_shuffle_epi8(
                _mm256_set1_epi32(qh),
                _mm256_set_epi64x(0x0303_0303_0303_0303, 0x0202_0202_0202_0202, 0x0101_0101_0101_0101, 0))
            let fifthBits = _mm256_cmpeq_epi8(
                _mm256_or_si256(spread, _mm256_set1_epi64x(0x7FBF_DFEF_F7FB_FDFE)), _mm256_set1_epi64x(-1))
            return _mm256_or_si256(nibbles, _mm256_andnot_si256(fifthBits, _mm256_set1_epi8(-16)))
        }
    }

    enum Q8_0BlocksX86: SignedBlocksX86 {
        static var blockBytes: Int { q8_0BlockBytes }

        @inline(__always)
        static func unpack(_ block: UnsafeRawPointer) -> __m256i {
            _mm256_loadu_si256((block + 2).assumingMemoryBound(to: __m256i.self))
        }
    }

    /// The scale of the block at `block` (F16C).
    @inline(__always)
    func blockScaleX86(_ block: UnsafeRawPointer) -> Float {
        _cvtsh_ss(block.loadUnaligned(as: UInt16.self))
    }

    /// ggml's eight lane sums of signed weight bytes (as magnitudes `m` and the weights themselves, `w`, for their
    /// signs) times the 32 int8 activations at `a`, as floats. Exact: a pair sum is at most 2 · 128 · 127.
    @inline(__always)
    func signedLaneSums(_ m: __m256i, _ w: __m256i, _ a: UnsafePointer<Int8>) -> __m256 {
        let y = _mm256_sign_epi8(_mm256_loadu_si256(UnsafeRawPointer(a).assumingMemoryBound(to: __m256i.self)), w)
        return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(m, y), _mm256_set1_epi16(1)))
    }

    /// How a build forms ggml's eight lane sums of one unpacked weight block times the activations of eight rows
    /// (`groupProducts`): `prepare` once per weight block, `laneSums` once per row.
    protocol GroupLaneSumsX86 {
        /// The eight activation rows from `first` of `x` as `laneSums` reads them: row i's block b at
        /// `q + i · rowStride + b · blockStride`, copied into `scratch` (`8 · x.columns` bytes) where needed.
        static func activations(_ x: QuantizedActivations, first: Int, scratch: UnsafeMutablePointer<Int8>)
            -> (q: UnsafePointer<Int8>, rowStride: Int, blockStride: Int)
        /// What `laneSums` needs of the weight block `w`, shared by the eight rows.
        static func prepare(_ w: __m256i) -> (__m256i, __m256i)
        /// The eight lane sums of the prepared block times the 32 activations at `a`, as floats.
        static func laneSums(_ w: (__m256i, __m256i), _ a: UnsafePointer<Int8>) -> __m256
    }

    /// `psignb`, `pmaddubsw` and `pmaddwd` on the activations in place (AVX2, AVX-512).
    enum SignedLaneSumsX86: GroupLaneSumsX86 {
        @inline(__always)
        static func activations(_ x: QuantizedActivations, first: Int, scratch: UnsafeMutablePointer<Int8>)
            -> (q: UnsafePointer<Int8>, rowStride: Int, blockStride: Int)
        {
            (UnsafePointer(x.row(first).quants), x.columns, 32)
        }

        /// The weights' magnitudes and the weights (for their signs).
        @inline(__always)
        static func prepare(_ w: __m256i) -> (__m256i, __m256i) { (_mm256_sign_epi8(w, w), w) }

        @inline(__always)
        static func laneSums(_ w: (__m256i, __m256i), _ a: UnsafePointer<Int8>) -> __m256 {
            signedLaneSums(w.0, w.1, a)
        }
    }

    #if SANAD_KERNEL_BUILD_AVX512VNNI
        /// `vpdpbusd` on activations with 128 added, started from −128·Σ w (see the top of the file).
        enum BiasedLaneSumsVNNI: GroupLaneSumsX86 {
            /// The eight rows block by block (row i's block b at `256b + 32i`, contiguous for the inner loop), each
            /// byte XOR 0x80.
            @inline(__always)
            static func activations(_ x: QuantizedActivations, first: Int, scratch: UnsafeMutablePointer<Int8>)
                -> (q: UnsafePointer<Int8>, rowStride: Int, blockStride: Int)
            {
                let bias = _mm256_set1_epi8(-128)
                for i in 0..<8 {
                    let q = UnsafeRawPointer(x.row(first + i).quants)
                    for b in 0..<x.columns / 32 {
                        let v = _mm256_loadu_si256((q + 32 * b).assumingMemoryBound(to: __m256i.self))
                        _mm256_storeu_si256(
                            UnsafeMutableRawPointer(scratch + 256 * b + 32 * i).assumingMemoryBound(to: __m256i.self),
                            _mm256_xor_si256(v, bias))
                    }
                }
                return (UnsafePointer(scratch), 32, 256)
            }

            /// The bits of 1.5 · 2²³ minus 128 · (the weights' four-byte sums), and the weights.
            @inline(__always)
            static func prepare(_ w: __m256i) -> (__m256i, __m256i) {
                let sums = dotBytesVNNI(_mm256_setzero_si256(), _mm256_set1_epi8(-128), w)
                return (_mm256_sub_epi32(_mm256_set1_epi32(0x4B40_0000), sums), w)
            }

            /// The lane sums converted as `smallIntToFloat` converts (IntegerDot.swift): started from the bits of
            /// 1.5 · 2²³, a lane ends as the bits of the float 1.5 · 2²³ + sum (|sum| ≤ 4 · 128 · 127 < 2²²), and
            /// one subtraction leaves the sum, exactly. That is `cvtdq2ps`'s value with a float subtraction instead,
            /// which the CPU runs on more of its pipes: the eight rows' conversions were what bounded this loop
            /// (measured on Zen 4: 12-25 % faster in isolation).
            @inline(__always)
            static func laneSums(_ w: (__m256i, __m256i), _ a: UnsafePointer<Int8>) -> __m256 {
                let x = _mm256_loadu_si256(UnsafeRawPointer(a).assumingMemoryBound(to: __m256i.self))
                return _mm256_sub_ps(_mm256_castsi256_ps(dotBytesVNNI(w.0, x, w.1)), _mm256_set1_ps(12_582_912))
            }
        }

        /// `vpdpbusd`: `s` plus, per 32-bit lane, the four products of `a`'s unsigned bytes and `b`'s signed bytes.
        /// (`_mm256_dpbusd_epi32` is a C macro, which Swift does not import; the masked form is a function, and
        /// with every lane selected it compiles to the plain instruction.)
        @inline(__always)
        func dotBytesVNNI(_ s: __m256i, _ a: __m256i, _ b: __m256i) -> __m256i {
            _mm256_mask_dpbusd_epi32(s, 0xFF, a, b)
        }

        typealias GroupLaneSums = BiasedLaneSumsVNNI
    #else
        typealias GroupLaneSums = SignedLaneSumsX86
    #endif

    /// Rows `rows` of the matrix `w` (format `F`) times every activation row of `x` (Q8_0), into
    /// `out[b · outStride + r]`: `multiplyRows` for the format, each product bit for bit the portable dot product's.
    ///
    /// As for Q4_1 (Q4_1PairedX86.swift), activation rows go in groups of eight (a last group of four to seven
    /// padded with `QuantizedActivations`'s zero rows) and fewer than four rows go one at a time; unlike there, each
    /// weight block is unpacked once per call, not once per group.
    func multiplyRowsSignedBlocksX86<F: SignedBlocksX86>(
        _ format: F.Type, _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>,
        out: UnsafeMutablePointer<Float>, outStride: Int
    ) {
        let blocks = w.columns / 32
        let batch = x.rows
        let groups = batch / 8 + (batch % 8 >= 4 ? 1 : 0)
        if groups > 0 {
            // The weight rows' block scales, converted once rather than once per group (which took a tenth of the
            // time: a gather of halves per row and group).
            let dw = UnsafeMutablePointer<Float>.allocate(capacity: rows.count * blocks)
            defer { dw.deallocate() }
            for r in rows {
                let row = w.row(r)
                let scales = dw + (r - rows.lowerBound) * blocks
                for b in 0..<blocks { scales[b] = blockScaleX86(row + b * F.blockBytes) }
            }
            // Rows in tiles whose blocks are unpacked and prepared (`GroupLaneSums.prepare`) once, into 64 bytes
            // each, instead of once per group of activation rows: the unpacking and the shared correction had taken
            // a third of the inner loop (on Zen 4: 12.7 cycles per block and group, 8.2 with the blocks prepared).
            // A tile's prepared blocks stay in the level-1 cache while every group of activations (laid out once,
            // below) streams past them.
            let tileRows = max(1, min(rows.count, (1 << 14) / (64 * blocks)))
            let prepared = UnsafeMutablePointer<__m256i>.allocate(capacity: 2 * tileRows * blocks)
            defer { prepared.deallocate() }
            // Every group's activations as `GroupLaneSums` lays them out (8 · 32 bytes per block and group).
            let copied = UnsafeMutablePointer<Int8>.allocate(capacity: groups * 256 * blocks)
            defer { copied.deallocate() }
            let layouts = (0..<groups).map {
                GroupLaneSums.activations(x, first: 8 * $0, scratch: copied + $0 * 256 * blocks)
            }
            // Floats: two weight rows' scale products, then their results.
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 16 * blocks + 16) { scratch in
                guard let ds = scratch.baseAddress else { return }  // ds[8b + i]: scale product of block b, row i
                let results = ds + 16 * blocks
                for tileStart in stride(from: rows.lowerBound, to: rows.upperBound, by: tileRows) {
                    let tile = tileStart..<min(tileStart + tileRows, rows.upperBound)
                    for r in tile {
                        prepareBlocks(
                            F.self, GroupLaneSums.self, w.row(r), blocks: blocks,
                            into: prepared + 2 * (r - tileStart) * blocks)
                    }
                    for (g, (q, rowStride, blockStride)) in layouts.enumerated() {
                        let first = 8 * g
                        // Weight rows in pairs where the build has the registers for sixteen sums.
                        let step = BuiltKernels.vectorRegisters >= 32 ? 2 : 1
                        for r in stride(from: tile.lowerBound, to: tile.upperBound, by: step) {
                            let pair = r + 1 < tile.upperBound && step == 2
                            for k in 0..<(pair ? 2 : 1) {
                                groupScaleProducts(
                                    x, first: first, blocks: blocks, dw: dw + (r + k - rows.lowerBound) * blocks,
                                    into: ds + 8 * k * blocks)
                            }
                            let weights = prepared + 2 * (r - tileStart) * blocks
                            if pair {
                                groupProductsPair(
                                    GroupLaneSums.self, weights, weights + 2 * blocks, q, rowStride: rowStride,
                                    blockStride: blockStride, blocks: blocks, ds: ds, ds + 8 * blocks,
                                    into: results, results + 8)
                            } else {
                                groupProducts(
                                    GroupLaneSums.self, weights, q, rowStride: rowStride, blockStride: blockStride,
                                    blocks: blocks, ds: ds, into: results)
                            }
                            for k in 0..<(pair ? 2 : 1) {
                                for i in 0..<min(8, batch - first) {
                                    out[(first + i) * outStride + r + k] = results[8 * k + i]
                                }
                            }
                        }
                    }
                }
            }
        }
        for b in min(8 * groups, batch)..<batch {
            let a = x.row(b)
            for r in rows { out[b * outStride + r] = dotSignedBlocksX86(F.self, w.row(r), a, blocks: blocks) }
        }
    }

    /// The dot product of one weight row and one activation row (generation).
    @inline(__always)
    func dotSignedBlocksX86<F: SignedBlocksX86>(
        _ format: F.Type, _ row: UnsafeRawPointer, _ a: ActivationRow, blocks: Int
    ) -> Float {
        var acc = _mm256_setzero_ps()
        for b in 0..<blocks {
            let block = row + b * F.blockBytes
            let w = F.unpack(block)
            let d = _mm256_set1_ps(blockScaleX86(block) * a.scales[b])
            acc = _mm256_fmadd_ps(d, signedLaneSums(_mm256_sign_epi8(w, w), w, a.quants + 32 * b), acc)
        }
        return llamaHorizontalSum(acc)
    }

    /// The `blocks` blocks of the weight row at `row` unpacked and prepared for `L.laneSums`, block b's pair at
    /// `prepared[2b]` and `prepared[2b + 1]`.
    @inline(__always)
    func prepareBlocks<F: SignedBlocksX86, L: GroupLaneSumsX86>(
        _ format: F.Type, _ lanes: L.Type, _ row: UnsafeRawPointer, blocks: Int,
        into prepared: UnsafeMutablePointer<__m256i>
    ) {
        for b in 0..<blocks {
            let w = L.prepare(F.unpack(row + b * F.blockBytes))
            prepared[2 * b] = w.0
            prepared[2 * b + 1] = w.1
        }
    }

    /// The block products of one weight row (its blocks prepared by `prepareBlocks`) and eight activation rows
    /// (row i's block b at `q + i · rowStride + b · blockStride`, as `L.activations` lays them out), with the scale
    /// products `ds` (`groupScaleProducts`): each row's horizontal sum into `results[i]`.
    @inline(__always)
    func groupProducts<L: GroupLaneSumsX86>(
        _ lanes: L.Type, _ prepared: UnsafePointer<__m256i>, _ q: UnsafePointer<Int8>, rowStride: Int,
        blockStride: Int, blocks: Int, ds: UnsafePointer<Float>, into results: UnsafeMutablePointer<Float>
    ) {
        var sums = EightRowSumsX86()
        for b in 0..<blocks {
            let w = (prepared[2 * b], prepared[2 * b + 1])
            let a = q + blockStride * b
            sums.add(scales: ds + 8 * b) { L.laneSums(w, a + $0 * rowStride) }
        }
        sums.store(into: results)
    }

    /// `groupProducts` of two weight rows (`preparedA`, `preparedB`; scale products `dsA`, `dsB`; results into
    /// `resultsA`, `resultsB`) at once: each activation row's block, loaded once, serves both. The loop issues two
    /// loads per block and activation row (the quants and the scale product an FMA broadcasts) for one `vpdpbusd`
    /// and one FMA, as many as the FMAs; sharing the quants' load removes a quarter of them. Sixteen sums in
    /// registers: for the builds with 32 of them.
    @inline(__always)
    func groupProductsPair<L: GroupLaneSumsX86>(
        _ lanes: L.Type, _ preparedA: UnsafePointer<__m256i>, _ preparedB: UnsafePointer<__m256i>,
        _ q: UnsafePointer<Int8>, rowStride: Int, blockStride: Int, blocks: Int, ds dsA: UnsafePointer<Float>,
        _ dsB: UnsafePointer<Float>, into resultsA: UnsafeMutablePointer<Float>,
        _ resultsB: UnsafeMutablePointer<Float>
    ) {
        var sumsA = EightRowSumsX86()
        var sumsB = EightRowSumsX86()
        for b in 0..<blocks {
            let wA = (preparedA[2 * b], preparedA[2 * b + 1])
            let wB = (preparedB[2 * b], preparedB[2 * b + 1])
            let a = q + blockStride * b
            sumsA.add(scales: dsA + 8 * b) { L.laneSums(wA, a + $0 * rowStride) }
            sumsB.add(scales: dsB + 8 * b) { L.laneSums(wB, a + $0 * rowStride) }
        }
        sumsA.store(into: resultsA)
        sumsB.store(into: resultsB)
    }

    /// The float sums of one weight row times eight activation rows, one register each: eight independent chains
    /// of fused multiply-adds, reduced as hsum_float_8.
    struct EightRowSumsX86 {
        var acc0 = _mm256_setzero_ps()
        var acc1 = _mm256_setzero_ps()
        var acc2 = _mm256_setzero_ps()
        var acc3 = _mm256_setzero_ps()
        var acc4 = _mm256_setzero_ps()
        var acc5 = _mm256_setzero_ps()
        var acc6 = _mm256_setzero_ps()
        var acc7 = _mm256_setzero_ps()

        /// `acc_i = fma(d[i], laneSums(i), acc_i)` for rows i = 0 … 7.
        @inline(__always)
        mutating func add(scales d: UnsafePointer<Float>, _ laneSums: (Int) -> __m256) {
            acc0 = _mm256_fmadd_ps(_mm256_set1_ps(d[0]), laneSums(0), acc0)
            acc1 = _mm256_fmadd_ps(_mm256_set1_ps(d[1]), laneSums(1), acc1)
            acc2 = _mm256_fmadd_ps(_mm256_set1_ps(d[2]), laneSums(2), acc2)
            acc3 = _mm256_fmadd_ps(_mm256_set1_ps(d[3]), laneSums(3), acc3)
            acc4 = _mm256_fmadd_ps(_mm256_set1_ps(d[4]), laneSums(4), acc4)
            acc5 = _mm256_fmadd_ps(_mm256_set1_ps(d[5]), laneSums(5), acc5)
            acc6 = _mm256_fmadd_ps(_mm256_set1_ps(d[6]), laneSums(6), acc6)
            acc7 = _mm256_fmadd_ps(_mm256_set1_ps(d[7]), laneSums(7), acc7)
        }

        /// Row i's horizontal sum into `results[i]`.
        @inline(__always)
        func store(into results: UnsafeMutablePointer<Float>) {
            results[0] = llamaHorizontalSum(acc0)
            results[1] = llamaHorizontalSum(acc1)
            results[2] = llamaHorizontalSum(acc2)
            results[3] = llamaHorizontalSum(acc3)
            results[4] = llamaHorizontalSum(acc4)
            results[5] = llamaHorizontalSum(acc5)
            results[6] = llamaHorizontalSum(acc6)
            results[7] = llamaHorizontalSum(acc7)
        }
    }

#endif
