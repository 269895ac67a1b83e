// IQ4_XS: super-blocks of 256 weights, 136 bytes: half d, 16 bits of high scale bits (scales_h), 4 bytes of low
// scale nibbles (scales_l), 128 bytes of 4-bit indices into the non-linear table `iq4NLValues`. Sub-block s (0..<8,
// 32 weights) has the 6-bit scale ls = ((scales_l[s/2] >> 4·(s mod 2)) & 15) | ((scales_h >> 2s) & 3) << 4; its
// weight l (< 16) is table[qs[16s + l] & 15], weight 16 + l table[qs[16s + l] >> 4]; value = d·(ls − 32)·weight.
// Dot products read Q8_K activations.

/// Bytes per IQ4_XS super-block.
@inlinable public var iq4_XSBlockBytes: Int { 136 }

/// Scale of sub-block `s` (0..<8) of an IQ4_XS super-block, minus 32.
@inline(__always)
@inlinable
func scaleIQ4_XS(_ block: UnsafeRawPointer, _ s: Int) -> Int32 {
    let high = Int32(block.loadUnaligned(fromByteOffset: 2, as: UInt16.self) >> (2 * s)) & 3
    let low = Int32(block.load(fromByteOffset: 4 + s / 2, as: UInt8.self) >> (4 * (s % 2))) & 15
    return (low | high << 4) - 32
}

/// The eight integer lanes of super-block `b` of an IQ4_XS row with Q8_K activations as llama.cpp's AVX2
/// ggml_vec_dot_iq4_xs_q8_K forms them: lane l holds Σ scale · weight · a over elements 4l…4l+3 of every
/// sub-block.
@inline(__always)
@inlinable
func superBlockLanesIQ4_XS(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> SIMD8<Int32> {
    let x = UnsafeRawPointer(a.quants + b * 256)
    var low = SIMD4<Int32>()
    var high = SIMD4<Int32>()
    for s in 0..<8 {
        let q = block + 8 + 16 * s
        let scale = scaleIQ4_XS(block, s)
        let (le, lo) = iq4Nibbles(q, high: false)
        let (he, ho) = iq4Nibbles(q, high: true)
        low &+= dot16(le, lo, x + 32 * s) &* scale
        high &+= dot16(he, ho, x + 32 * s + 16) &* scale
    }
    return SIMD8(lowHalf: low, highHalf: high)
}

/// IQ4_XS weights: batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled product does.
public enum IQ4_XSRows: TiledKQuant {
    public typealias Batched = IQ4_XSTiledRows

    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: iq4_XSBlockBytes, activationFormat: .q8_K)
    }

    /// Dequantizes `count` (a multiple of 256) IQ4_XS weights at `row` into `out` (ggml's dequantize_row_iq4_xs).
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        let table = iq4NLValues
        for b in 0..<count / 256 {
            let block = row + b * iq4_XSBlockBytes
            let d = loadHalf(block)
            let q = (block + 8).assumingMemoryBound(to: UInt8.self)
            for s in 0..<8 {
                let dl = d * Float(scaleIQ4_XS(block, s))
                let y = out + b * 256 + 32 * s
                for l in 0..<16 {
                    y[l] = dl * Float(table[Int(q[16 * s + l] & 15)])
                    y[l + 16] = dl * Float(table[Int(q[16 * s + l] >> 4)])
                }
            }
        }
    }

    /// Σ row · activations over `count` values, rounded as llama.cpp's AVX2 ggml_vec_dot_iq4_xs_q8_K: per
    /// super-block `acc = fma(d·da, lane, acc)` per lane of `superBlockLanesIQ4_XS`, then hsum_float_8.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        for b in 0..<count / 256 {
            let block = row + b * iq4_XSBlockBytes
            let lanes = superBlockLanesIQ4_XS(block, a, b)
            acc = acc.addingProduct(SIMD8(repeating: loadHalf(block) * a.scales[b]), intToFloat(lanes))
        }
        return llamaHorizontalSum(acc)
    }
}

/// `IQ4_XSRows.dot` as llama.cpp's tiled K-quant product rounds it (TiledKQuants.swift).
public enum IQ4_XSTiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * iq4_XSBlockBytes
            acc = tiledStep(
                acc, d: loadHalf(block), products: superBlockLanesIQ4_XS(block, a, b).wrappedSum(), dmin: 0,
                mins: 0, da: a.scales[b])
        }
        return acc
    }
}
