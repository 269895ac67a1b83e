// Q5_K: super-blocks of 256 weights, 176 bytes: half d, half dmin, 12 bytes of eight 6-bit scales and mins (packed
// as Q4_K's), 32 bytes of fifth bits (qh), 128 bytes of nibbles (qs). Chunk j (0..<4, 64 weights): weight 64j + l
// is the low nibble of qs[32j + l] plus 16 · bit 2j of qh[l] (scale and min 2j), weight 64j + 32 + l the high
// nibble plus 16 · bit 2j+1 (scale and min 2j+1), l in 0..<32; value = d·scale·q − dmin·min. Dot products read Q8_K
// activations.

/// Bytes per Q5_K super-block.
@inlinable public var q5_KBlockBytes: Int { 176 }

/// The integer sums of super-block `b` of a Q5_K row with Q8_K activations as llama.cpp's AVX2
/// ggml_vec_dot_q5_K_q8_K forms them: lane l (0..<8) holds Σ scale · q · a over elements 4l…4l+3 of every 32-weight
/// sub-block; `mins` is Σ min · Σa over the eight sub-blocks. Exact integers.
@inline(__always)
@inlinable
func superBlockLanesQ5_K(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> (
    lanes: SIMD8<Int32>, mins: Int32
) {
    let mask = SIMD8<Int16>(repeating: 0x0F)
    let one = SIMD8<Int16>(repeating: 1)
    let scales = (block + 4).assumingMemoryBound(to: UInt8.self)
    let x = UnsafeRawPointer(a.quants + b * 256)
    var lanes = SIMD8<Int32>()
    for half in 0..<2 {  // bytes 16·half ..< 16·half + 16 of qh and of each chunk's 32 bytes of qs: lanes 4·half…
        let h = block.loadUnaligned(fromByteOffset: 16 + 16 * half, as: SIMD8<Int16>.self)
        var sum = SIMD4<Int32>()
        for j in 0..<4 {
            let raw = block.loadUnaligned(fromByteOffset: 48 + 32 * j + 16 * half, as: SIMD8<Int16>.self)
            let low = Int16(2 * j)
            let high = Int16(2 * j + 1)
            let w0e = (raw & mask) | (((h &>> low) & one) &<< 4)
            let w0o = ((raw &>> 8) & mask) | (((h &>> (low + 8)) & one) &<< 4)
            let w1e = ((raw &>> 4) & mask) | (((h &>> high) & one) &<< 4)
            let w1o = ((raw &>> 12) & mask) | (((h &>> (high + 8)) & one) &<< 4)
            let (s1, _) = scaleMinQ4_K(2 * j, scales)
            let (s2, _) = scaleMinQ4_K(2 * j + 1, scales)
            sum &+= dot16(w0e, w0o, x + 64 * j + 16 * half) &* Int32(s1)
            sum &+= dot16(w1e, w1o, x + 64 * j + 32 + 16 * half) &* Int32(s2)
        }
        if half == 0 { lanes.lowHalf = sum } else { lanes.highHalf = sum }
    }
    let bs = a.blockSums + b * 16
    var mins: Int32 = 0
    for s in 0..<8 { mins &+= Int32(scaleMinQ4_K(s, scales).min) &* (bs[2 * s] &+ bs[2 * s + 1]) }
    return (lanes, mins)
}

/// Q5_K weights: batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled product does.
public enum Q5_KRows: TiledKQuant {
    public typealias Batched = Q5_KTiledRows

    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: q5_KBlockBytes, activationFormat: .q8_K)
    }

    /// Dequantizes `count` (a multiple of 256) Q5_K weights at `row` into `out` (ggml's dequantize_row_q5_K).
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 256 {
            let block = row + b * q5_KBlockBytes
            let d = loadHalf(block)
            let dmin = loadHalf(block, 2)
            let scales = (block + 4).assumingMemoryBound(to: UInt8.self)
            let qh = (block + 16).assumingMemoryBound(to: UInt8.self)
            let q = (block + 48).assumingMemoryBound(to: UInt8.self)
            let y = out + b * 256
            for j in 0..<4 {
                let (s1, m1) = scaleMinQ4_K(2 * j, scales)
                let (s2, m2) = scaleMinQ4_K(2 * j + 1, scales)
                let d1 = d * Float(s1)
                let min1 = dmin * Float(m1)
                let d2 = d * Float(s2)
                let min2 = dmin * Float(m2)
                for l in 0..<32 {
                    let h1: UInt8 = (qh[l] >> (2 * j)) & 1 == 0 ? 0 : 16
                    let h2: UInt8 = (qh[l] >> (2 * j + 1)) & 1 == 0 ? 0 : 16
                    y[64 * j + l] = d1 * Float((q[32 * j + l] & 0x0F) + h1) - min1
                    y[64 * j + 32 + l] = d2 * Float((q[32 * j + l] >> 4) + h2) - min2
                }
            }
        }
    }

    /// Σ row · activations over `count` values, rounded as llama.cpp's AVX2 ggml_vec_dot_q5_K_q8_K: per
    /// super-block `acc = fma(da·d, lane, acc)` per lane of `superBlockLanesQ5_K` and
    /// `summs = fma(−da·dmin, mins, summs)`; the result hsum_float_8(acc) + summs.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        var summs: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * q5_KBlockBytes
            let (lanes, mins) = superBlockLanesQ5_K(block, a, b)
            summs = summs.addingProduct(-a.scales[b] * loadHalf(block, 2), Float(mins))
            acc = acc.addingProduct(SIMD8(repeating: a.scales[b] * loadHalf(block)), intToFloat(lanes))
        }
        return llamaHorizontalSum(acc) + summs
    }
}

/// `Q5_KRows.dot` as llama.cpp's tiled K-quant product rounds it (TiledKQuants.swift).
public enum Q5_KTiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * q5_KBlockBytes
            let (lanes, mins) = superBlockLanesQ5_K(block, a, b)
            acc = tiledStep(
                acc, d: loadHalf(block), products: lanes.wrappedSum(), dmin: loadHalf(block, 2), mins: mins,
                da: a.scales[b])
        }
        return acc
    }
}
