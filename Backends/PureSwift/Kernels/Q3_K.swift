// Q3_K: super-blocks of 256 weights, 110 bytes: 32 bytes of high bits (hmask), 64 bytes of 2-bit low parts (qs),
// 12 bytes packing sixteen 6-bit scales, half d. Half n (0..<2, 128 weights), shift j (0..<4): weight
// 128n + 32j + l (l in 0..<32) is q = ((qs[32n + l] >> 2j) & 3) − (bit 4n + j of hmask[l] set ? 0 : 4), with scale
// 8n + 2j + l/16; value = d·(scale − 32)·q. Dot products read Q8_K activations.

/// Bytes per Q3_K super-block.
@inlinable public var q3_KBlockBytes: Int { 110 }

/// Scale `i` (0..<16) of a Q3_K super-block, minus 32, from its 12 packed bytes `s`: low four bits from byte i
/// (i < 8) or the high nibble of byte i − 8, high two bits from byte 8 + i mod 4 at bit 2·(i / 4).
@inline(__always)
@inlinable
func scaleQ3_K(_ i: Int, _ s: UnsafePointer<UInt8>) -> Int32 {
    let low = i < 8 ? s[i] & 0x0F : s[i - 8] >> 4
    let high = (s[8 + i % 4] >> (2 * (i / 4))) & 3
    return Int32(low | high << 4) - 32
}

/// The eight integer lanes of super-block `b` of a Q3_K row with Q8_K activations as llama.cpp's AVX2
/// ggml_vec_dot_q3_K_q8_K forms them: lane l holds Σ scale · q · a over elements 4l…4l+3 (l < 4) or 4l−16…4l−13
/// (l ≥ 4) of every 32-weight chunk.
@inline(__always)
@inlinable
func superBlockLanesQ3_K(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> SIMD8<Int32> {
    let three = SIMD8<Int16>(repeating: 3)
    let one = SIMD8<Int16>(repeating: 1)
    let four = SIMD8<Int16>(repeating: 4)
    let scales = (block + 96).assumingMemoryBound(to: UInt8.self)
    let x = UnsafeRawPointer(a.quants + b * 256)
    let h0 = block.loadUnaligned(as: SIMD8<Int16>.self)
    let h1 = block.loadUnaligned(fromByteOffset: 16, as: SIMD8<Int16>.self)
    var low = SIMD4<Int32>()
    var high = SIMD4<Int32>()
    for n in 0..<2 {
        let r0 = block.loadUnaligned(fromByteOffset: 32 + 32 * n, as: SIMD8<Int16>.self)
        let r1 = block.loadUnaligned(fromByteOffset: 48 + 32 * n, as: SIMD8<Int16>.self)
        for j in 0..<4 {
            let s = Int16(2 * j)
            let bit = Int16(4 * n + j)
            let chunk = x + 128 * n + 32 * j
            let w0e = ((r0 &>> s) & three) | (((h0 &>> bit) & one) &<< 2) &- four
            let w0o = ((r0 &>> (s + 8)) & three) | (((h0 &>> (bit + 8)) & one) &<< 2) &- four
            let w1e = ((r1 &>> s) & three) | (((h1 &>> bit) & one) &<< 2) &- four
            let w1o = ((r1 &>> (s + 8)) & three) | (((h1 &>> (bit + 8)) & one) &<< 2) &- four
            low &+= dot16(w0e, w0o, chunk) &* scaleQ3_K(8 * n + 2 * j, scales)
            high &+= dot16(w1e, w1o, chunk + 16) &* scaleQ3_K(8 * n + 2 * j + 1, scales)
        }
    }
    return SIMD8(lowHalf: low, highHalf: high)
}

/// Q3_K weights: batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled product does.
public enum Q3_KRows: TiledKQuant {
    public typealias Batched = Q3_KTiledRows

    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: q3_KBlockBytes, activationFormat: .q8_K)
    }

    /// Dequantizes `count` (a multiple of 256) Q3_K weights at `row` into `out` (ggml's dequantize_row_q3_K).
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 256 {
            let block = row + b * q3_KBlockBytes
            let d = loadHalf(block, 108)
            let hmask = block.assumingMemoryBound(to: UInt8.self)
            let q = (block + 32).assumingMemoryBound(to: UInt8.self)
            let scales = (block + 96).assumingMemoryBound(to: UInt8.self)
            let y = out + b * 256
            for n in 0..<2 {
                for j in 0..<4 {
                    for half in 0..<2 {
                        let dl = d * Float(scaleQ3_K(8 * n + 2 * j + half, scales))
                        for l in 16 * half..<16 * half + 16 {
                            let low = Int32((q[32 * n + l] >> (2 * j)) & 3)
                            let h: Int32 = (hmask[l] >> (4 * n + j)) & 1 == 0 ? 4 : 0
                            y[128 * n + 32 * j + l] = dl * Float(low - h)
                        }
                    }
                }
            }
        }
    }

    /// Σ row · activations over `count` values, rounded as llama.cpp's AVX2 ggml_vec_dot_q3_K_q8_K: per
    /// super-block `acc = fma(da·d, lane, acc)` per lane of `superBlockLanesQ3_K`, then hsum_float_8.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        for b in 0..<count / 256 {
            let block = row + b * q3_KBlockBytes
            let lanes = superBlockLanesQ3_K(block, a, b)
            acc = acc.addingProduct(SIMD8(repeating: a.scales[b] * loadHalf(block, 108)), intToFloat(lanes))
        }
        return llamaHorizontalSum(acc)
    }
}

/// `Q3_KRows.dot` as llama.cpp's tiled K-quant product rounds it (TiledKQuants.swift).
public enum Q3_KTiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * q3_KBlockBytes
            acc = tiledStep(
                acc, d: loadHalf(block, 108), products: superBlockLanesQ3_K(block, a, b).wrappedSum(), dmin: 0,
                mins: 0, da: a.scales[b])
        }
        return acc
    }
}
