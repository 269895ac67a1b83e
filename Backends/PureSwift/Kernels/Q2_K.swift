// Q2_K: super-blocks of 256 weights, 84 bytes: 16 bytes of 4-bit scale (low) and min (high) pairs, 64 bytes of
// 2-bit values (qs), half d, half dmin. Half n (0..<2, 128 weights), shift j (0..<4): weight 128n + 32j + l is
// (qs[32n + l] >> 2j) & 3, l in 0..<32, with scale and min 8n + 2j + l/16; value = d·scale·q − dmin·min. Dot
// products read Q8_K activations.

/// Bytes per Q2_K super-block.
@inlinable public var q2_KBlockBytes: Int { 84 }

/// The integer sums of super-block `b` of a Q2_K row with Q8_K activations as llama.cpp's AVX2
/// ggml_vec_dot_q2_K_q8_K forms them: `lanes[l]` = Σ scale · q · a over elements 4l…4l+3 (l < 4) or 4l−16…4l−13
/// (l ≥ 4) of every 32-weight chunk; `mins[l]` = min₂ₗ · Σa (sub-block 2l) + min₂ₗ₊₁ · Σa (sub-block 2l+1).
@inline(__always)
@inlinable
func superBlockLanesQ2_K(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> (
    lanes: SIMD8<Int32>, mins: SIMD8<Int32>
) {
    let three = SIMD8<Int16>(repeating: 3)
    let scales = block.assumingMemoryBound(to: UInt8.self)
    let x = UnsafeRawPointer(a.quants + b * 256)
    var low = SIMD4<Int32>()
    var high = SIMD4<Int32>()
    for n in 0..<2 {
        let r0 = block.loadUnaligned(fromByteOffset: 16 + 32 * n, as: SIMD8<Int16>.self)
        let r1 = block.loadUnaligned(fromByteOffset: 32 + 32 * n, as: SIMD8<Int16>.self)
        for j in 0..<4 {
            let s = Int16(2 * j)
            let chunk = x + 128 * n + 32 * j
            let s0 = Int32(scales[8 * n + 2 * j] & 0x0F)
            let s1 = Int32(scales[8 * n + 2 * j + 1] & 0x0F)
            low &+= dot16((r0 &>> s) & three, (r0 &>> (s + 8)) & three, chunk) &* s0
            high &+= dot16((r1 &>> s) & three, (r1 &>> (s + 8)) & three, chunk + 16) &* s1
        }
    }
    let bs = a.blockSums + b * 16
    var mins = SIMD8<Int32>()
    for l in 0..<8 {
        mins[l] = Int32(scales[2 * l] >> 4) &* bs[2 * l] &+ Int32(scales[2 * l + 1] >> 4) &* bs[2 * l + 1]
    }
    return (SIMD8(lowHalf: low, highHalf: high), mins)
}

/// Q2_K weights: batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled product does.
public enum Q2_KRows: TiledKQuant {
    public typealias Batched = Q2_KTiledRows

    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: q2_KBlockBytes, activationFormat: .q8_K)
    }

    /// Dequantizes `count` (a multiple of 256) Q2_K weights at `row` into `out` (ggml's dequantize_row_q2_K).
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 256 {
            let block = row + b * q2_KBlockBytes
            let d = loadHalf(block, 80)
            let dmin = loadHalf(block, 82)
            let scales = block.assumingMemoryBound(to: UInt8.self)
            let q = (block + 16).assumingMemoryBound(to: UInt8.self)
            let y = out + b * 256
            for n in 0..<2 {
                for j in 0..<4 {
                    for half in 0..<2 {
                        let sc = scales[8 * n + 2 * j + half]
                        let dl = d * Float(sc & 0x0F)
                        let ml = dmin * Float(sc >> 4)
                        for l in 16 * half..<16 * half + 16 {
                            y[128 * n + 32 * j + l] = dl * Float((q[32 * n + l] >> (2 * j)) & 3) - ml
                        }
                    }
                }
            }
        }
    }

    /// Σ row · activations over `count` values, rounded as llama.cpp's AVX2 ggml_vec_dot_q2_K_q8_K: per
    /// super-block `acc = fma(−da·dmin, mins, acc)`, then `acc = fma(da·d, lanes, acc)`, lane by lane; hsum_float_8.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        for b in 0..<count / 256 {
            let block = row + b * q2_KBlockBytes
            let (lanes, mins) = superBlockLanesQ2_K(block, a, b)
            acc = acc.addingProduct(SIMD8(repeating: -a.scales[b] * loadHalf(block, 82)), intToFloat(mins))
            acc = acc.addingProduct(SIMD8(repeating: a.scales[b] * loadHalf(block, 80)), intToFloat(lanes))
        }
        return llamaHorizontalSum(acc)
    }
}

/// `Q2_KRows.dot` as llama.cpp's tiled K-quant product rounds it (TiledKQuants.swift).
public enum Q2_KTiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * q2_KBlockBytes
            let (lanes, mins) = superBlockLanesQ2_K(block, a, b)
            acc = tiledStep(
                acc, d: loadHalf(block, 80), products: lanes.wrappedSum(), dmin: loadHalf(block, 82),
                mins: mins.wrappedSum(), da: a.scales[b])
        }
        return acc
    }
}
