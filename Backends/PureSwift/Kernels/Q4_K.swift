// Q4_K: super-blocks of 256 weights, 144 bytes: half d, half dmin, 12 bytes packing eight 6-bit scales and eight
// 6-bit mins, then 128 bytes of nibbles. Weights 64g ..< 64g+32 are the low nibbles of bytes 32g ..< 32g+32 (scale
// and min 2g), weights 64g+32 ..< 64g+64 their high nibbles (scale and min 2g+1); value = d·scale·q − dmin·min.
// Dot products read Q8_K activations.

/// Bytes per Q4_K super-block.
@inlinable public var q4_KBlockBytes: Int { 144 }

/// Scale and min of sub-block `j` (0..<8) from the 12 packed bytes (ggml's `get_scale_min_k4`).
@inline(__always)
@inlinable
func scaleMinQ4_K(_ j: Int, _ q: UnsafePointer<UInt8>) -> (scale: UInt8, min: UInt8) {
    if j < 4 { return (q[j] & 63, q[j + 4] & 63) }
    return ((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
}

/// The integer sums of super-block `b` of a Q4_K row with Q8_K activations, per pair g (0..<4) of 32-value
/// sub-blocks 2g and 2g+1: `products[g]` = scale₂g · Σq·a (sub-block 2g) + scale₂g₊₁ · Σq·a (sub-block 2g+1),
/// `mins[g]` = min₂g · Σa (sub-block 2g) + min₂g₊₁ · Σa (sub-block 2g+1). Exact integers, whatever the order.
@inline(__always)
@inlinable
func superBlockSumsQ4_K(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> (
    products: SIMD4<Int32>, mins: SIMD4<Int32>
) {
    let mask = SIMD8<Int16>(repeating: 0x0F)
    let scales = (block + 4).assumingMemoryBound(to: UInt8.self)
    let x = UnsafeRawPointer(a.quants + b * 256)
    let bs = a.blockSums + b * 16
    var products = SIMD4<Int32>()
    var mins = SIMD4<Int32>()
    for g in 0..<4 {
        let raw0 = block.loadUnaligned(fromByteOffset: 16 + 32 * g, as: SIMD8<Int16>.self)
        let raw1 = block.loadUnaligned(fromByteOffset: 32 + 32 * g, as: SIMD8<Int16>.self)
        let (s1, m1) = scaleMinQ4_K(2 * g, scales)
        let (s2, m2) = scaleMinQ4_K(2 * g + 1, scales)
        // Low nibbles: weights 64g + 0..<32 against activations 64g + 0..<32.
        let low = dot32(raw0 & mask, (raw0 &>> 8) & mask, raw1 & mask, (raw1 &>> 8) & mask, x + 64 * g)
        let high = dot32(
            (raw0 &>> 4) & mask, (raw0 &>> 12) & mask, (raw1 &>> 4) & mask, (raw1 &>> 12) & mask, x + 64 * g + 32)
        products[g] = low.wrappedSum() &* Int32(s1) &+ high.wrappedSum() &* Int32(s2)
        mins[g] = Int32(m1) &* (bs[4 * g] &+ bs[4 * g + 1]) &+ Int32(m2) &* (bs[4 * g + 2] &+ bs[4 * g + 3])
    }
    return (products, mins)
}

/// `Q4_KRows.dot` as ggml_gemm_q4_K_8x8_q8_K rounds it for activation rows in groups of four: the integer sums are
/// converted and accumulated per pair of sub-blocks.
@inline(__always)
@inlinable
public func dotQ4_KGrouped(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var acc: Float = 0
    var accMin: Float = 0
    for b in 0..<count / 256 {
        let block = row + b * q4_KBlockBytes
        let (products, mins) = superBlockSumsQ4_K(block, a, b)
        let d = loadHalf(block) * a.scales[b]
        let dmin = loadHalf(block, 2) * a.scales[b]
        for g in 0..<4 {
            acc = acc.addingProduct(Float(products[g]), d)
            accMin = accMin.addingProduct(Float(mins[g]), dmin)
        }
    }
    return acc - accMin
}

/// Q4_K weights.
public enum Q4_KRows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: q4_KBlockBytes, activationFormat: .q8_KRepacked)
    }

    /// Dequantizes `count` (a multiple of 256) Q4_K weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 256 {
            let block = row + b * q4_KBlockBytes
            let d = loadHalf(block)
            let dmin = loadHalf(block, 2)
            let scales = (block + 4).assumingMemoryBound(to: UInt8.self)
            let q = (block + 16).assumingMemoryBound(to: UInt8.self)
            let y = out + b * 256
            for g in 0..<4 {
                let (s1, m1) = scaleMinQ4_K(2 * g, scales)
                let (s2, m2) = scaleMinQ4_K(2 * g + 1, scales)
                let d1 = d * Float(s1)
                let min1 = dmin * Float(m1)
                let d2 = d * Float(s2)
                let min2 = dmin * Float(m2)
                for l in 0..<32 {
                    y[64 * g + l] = d1 * Float(q[32 * g + l] & 0x0F) - min1
                    y[64 * g + 32 + l] = d2 * Float(q[32 * g + l] >> 4) - min2
                }
            }
        }
    }

    /// Σ row · activations over `count` values (Q4_K weights × Q8_K activations), rounded as llama.cpp's AVX2 build
    /// rounds a single activation row: it repacks Q4_K matrices (q4_K_8x8_q8_K, rows a multiple of 8) and multiplies
    /// one row with ggml_gemv_q4_K_8x8_q8_K, which per super-block converts the whole integer sums once:
    /// `acc = fma(Σ products, dw·da, acc)`, `accMin = fma(Σ mins, dmin·da, accMin)`, result `acc − accMin`.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        var accMin: Float = 0
        for b in 0..<count / 256 {
            let block = row + b * q4_KBlockBytes
            let (products, mins) = superBlockSumsQ4_K(block, a, b)
            acc = acc.addingProduct(Float(products.wrappedSum()), loadHalf(block) * a.scales[b])
            accMin = accMin.addingProduct(Float(mins.wrappedSum()), loadHalf(block, 2) * a.scales[b])
        }
        return acc - accMin
    }

    /// Four `dotQ4_KGrouped` products of one Q4_K row with the four activation rows `a`, `a` + `rowStride` values, ….
    @inline(__always)
    @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        SIMD4(
            dotQ4_KGrouped(row, a, count: count),
            dotQ4_KGrouped(row, a.advanced(rows: 1, columns: rowStride), count: count),
            dotQ4_KGrouped(row, a.advanced(rows: 2, columns: rowStride), count: count),
            dotQ4_KGrouped(row, a.advanced(rows: 3, columns: rowStride), count: count))
    }
}
