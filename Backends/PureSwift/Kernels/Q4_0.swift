// Q4_0: blocks of 32 weights, 18 bytes: half scale d, then 16 bytes of nibbles. Byte j holds weight j (low nibble)
// and weight j+16 (high nibble); value = d · (nibble − 8). Dot products read Q8_0 activations.

/// Bytes per Q4_0 block.
@inlinable public var q4_0BlockBytes: Int { 18 }

/// The four weight vectors (even/odd lanes of low and high nibbles, minus 8) of one Q4_0 block.
@inline(__always)
@inlinable
func unpackQ4_0(_ block: UnsafeRawPointer) -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
    let raw = (block + 2).loadUnaligned(as: SIMD8<Int16>.self)
    let mask = SIMD8<Int16>(repeating: 0x0F)
    let eight = SIMD8<Int16>(repeating: 8)
    return (
        (raw & mask) &- eight, ((raw &>> 8) & mask) &- eight, ((raw &>> 4) & mask) &- eight,
        ((raw &>> 12) & mask) &- eight
    )
}

/// Four dot products of one Q4_0 row with four activation rows (the weights are unpacked once), each rounded as
/// `Q4_0Rows.dot`.
@inline(__always)
@inlinable
public func dot4Q4_0(
    _ row: UnsafeRawPointer, _ a0: ActivationRow, _ a1: ActivationRow, _ a2: ActivationRow, _ a3: ActivationRow,
    count: Int
) -> SIMD4<Float> {
    var acc = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q4_0BlockBytes
        let (w0, w1, w2, w3) = unpackQ4_0(block)
        let d = loadHalf(block)
        let sums = SIMD4(
            dot32(w0, w1, w2, w3, UnsafeRawPointer(a0.quants + b * 32)).wrappedSum(),
            dot32(w0, w1, w2, w3, UnsafeRawPointer(a1.quants + b * 32)).wrappedSum(),
            dot32(w0, w1, w2, w3, UnsafeRawPointer(a2.quants + b * 32)).wrappedSum(),
            dot32(w0, w1, w2, w3, UnsafeRawPointer(a3.quants + b * 32)).wrappedSum())
        let scales = SIMD4(d * a0.scales[b], d * a1.scales[b], d * a2.scales[b], d * a3.scales[b])
        acc = acc.addingProduct(smallIntToFloat(sums), scales)
    }
    return acc
}

/// Q4_0 weights.
public enum Q4_0Rows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q4_0BlockBytes, activationFormat: .q8_0)
    }

    @inline(__always)
    @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_0(
            row, a, a.advanced(rows: 1, columns: rowStride), a.advanced(rows: 2, columns: rowStride),
            a.advanced(rows: 3, columns: rowStride), count: count)
    }

    /// Dequantizes `count` (a multiple of 32) Q4_0 weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 32 {
            let block = row + b * q4_0BlockBytes
            let d = loadHalf(block)
            let q = (block + 2).assumingMemoryBound(to: UInt8.self)
            for j in 0..<16 {
                out[b * 32 + j] = Float(Int32(q[j] & 0x0F) - 8) * d
                out[b * 32 + j + 16] = Float(Int32(q[j] >> 4) - 8) * d
            }
        }
    }

    /// Σ row · activations over `count` values (Q4_0 weights × Q8_0 activations), rounded as llama.cpp's AVX2 build
    /// rounds it: it repacks Q4_0 matrices (q4_0_8x8_q8_0, rows a multiple of 8) and its GEMV and GEMM
    /// (gemv/gemm_q4_b32_8x8_q8_0_lut_avx) take, per block, the exact integer sum S: `acc = fma(S, dw·da, acc)`.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 32 {
            let block = row + b * q4_0BlockBytes
            let (w0, w1, w2, w3) = unpackQ4_0(block)
            let sum = dot32(w0, w1, w2, w3, UnsafeRawPointer(a.quants + b * 32)).wrappedSum()
            acc = acc.addingProduct(Float(sum), loadHalf(block) * a.scales[b])
        }
        return acc
    }
}
