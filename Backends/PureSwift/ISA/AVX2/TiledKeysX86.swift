// The tiled attention path's keys (Kernels/Attention.swift, `halvesToFloatsTiled`): a layer's F16 keys converted to
// floats and transposed tile by tile, eight rows by eight values at a time: eight F16C conversions, an 8 × 8
// transpose in registers and eight stores of eight floats, instead of one scattered store per value. Conversion and
// transposition move values without arithmetic, so the floats are the portable kernel's.
// Compiled in the AVX2 and AVX-512 builds only (this file is linked into every ISA folder).

#if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
    import _Builtin_intrinsics.intel
    import PureSwiftKernels

    /// `halvesToFloatsTiled`: runs of eight rows that start at a multiple of eight (so they share a tile, whose size
    /// is a multiple of eight) go through `transposeEightRowsX86`; other rows, and all rows where `columns` is not a
    /// multiple of eight, through the portable kernel.
    func halvesToFloatsTiledX86(
        _ halves: UnsafePointer<UInt16>, rows: Range<Int>, columns: Int, tile: Int, out: UnsafeMutablePointer<Float>
    ) {
        guard columns % 8 == 0 && tile % 8 == 0 else {
            halvesToFloatsTiled(halves, rows: rows, columns: columns, tile: tile, out: out)
            return
        }
        let first = min(rows.upperBound, (rows.lowerBound + 7) / 8 * 8)
        let last = max(first, rows.upperBound / 8 * 8)
        halvesToFloatsTiled(halves, rows: rows.lowerBound..<first, columns: columns, tile: tile, out: out)
        for t in stride(from: first, to: last, by: 8) {
            let column = out + t / tile * tile * columns + t % tile
            for i in stride(from: 0, to: columns, by: 8) {
                transposeEightRowsX86(halves + t * columns + i, rowStride: columns, into: column + i * tile, tile: tile)
            }
        }
        halvesToFloatsTiled(halves, rows: last..<rows.upperBound, columns: columns, tile: tile, out: out)
    }

    /// Eight values of eight rows of halves (row r at `h + r · rowStride`) as floats, transposed: value i of row r at
    /// `out[i · tile + r]`.
    @inline(__always)
    func transposeEightRowsX86(
        _ h: UnsafePointer<UInt16>, rowStride: Int, into out: UnsafeMutablePointer<Float>, tile: Int
    ) {
        @inline(__always) func row(_ r: Int) -> __m256 {
            _mm256_cvtph_ps(_mm_loadu_si128(UnsafeRawPointer(h + r * rowStride).assumingMemoryBound(to: __m128i.self)))
        }
        // Pairs of rows interleaved, then pairs of pairs: each 128-bit half holds four rows' value j (low half) or
        // j + 4 (high half).
        @inline(__always) func quads(_ r: Int) -> (__m256, __m256, __m256, __m256) {
            let (a, b, c, d) = (row(r), row(r + 1), row(r + 2), row(r + 3))
            let ab0 = _mm256_castps_pd(_mm256_unpacklo_ps(a, b))
            let ab1 = _mm256_castps_pd(_mm256_unpackhi_ps(a, b))
            let cd0 = _mm256_castps_pd(_mm256_unpacklo_ps(c, d))
            let cd1 = _mm256_castps_pd(_mm256_unpackhi_ps(c, d))
            return (
                _mm256_castpd_ps(_mm256_unpacklo_pd(ab0, cd0)), _mm256_castpd_ps(_mm256_unpackhi_pd(ab0, cd0)),
                _mm256_castpd_ps(_mm256_unpacklo_pd(ab1, cd1)), _mm256_castpd_ps(_mm256_unpackhi_pd(ab1, cd1))
            )
        }
        let low = quads(0)
        let high = quads(4)
        let highHalf = _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1))
        let upper = _mm256_setr_epi32(4, 5, 6, 7, 4, 5, 6, 7)
        @inline(__always) func store(_ j: Int, _ a: __m256, _ b: __m256) {
            // Value j: the low halves of rows 0-3 and 4-7; value j + 4: their high halves.
            _mm256_storeu_ps(out + j * tile, _mm256_set_m128(_mm256_castps256_ps128(b), _mm256_castps256_ps128(a)))
            _mm256_storeu_ps(out + (j + 4) * tile, _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, upper), b, highHalf))
        }
        store(0, low.0, high.0)
        store(1, low.1, high.1)
        store(2, low.2, high.2)
        store(3, low.3, high.3)
    }
#endif
