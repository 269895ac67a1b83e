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

/// Four dot products of one Q4_0 row with four activation rows (the weights are unpacked once).
@inline(__always)
@inlinable
public func dot4Q4_0(
    _ row: UnsafeRawPointer, _ a0: ActivationRow, _ a1: ActivationRow, _ a2: ActivationRow, _ a3: ActivationRow,
    count: Int
) -> SIMD4<Float> {
    var acc0 = SIMD4<Float>()
    var acc1 = SIMD4<Float>()
    var acc2 = SIMD4<Float>()
    var acc3 = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q4_0BlockBytes
        let (w0, w1, w2, w3) = unpackQ4_0(block)
        let d = loadHalf(block)
        acc0 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a0.quants + b * 32))) * (d * a0.scales[b])
        acc1 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a1.quants + b * 32))) * (d * a1.scales[b])
        acc2 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a2.quants + b * 32))) * (d * a2.scales[b])
        acc3 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a3.quants + b * 32))) * (d * a3.scales[b])
    }
    return SIMD4(acc0.sum(), acc1.sum(), acc2.sum(), acc3.sum())
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

    /// Σ row · activations over `count` values (Q4_0 weights × Q8_0 activations).
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD4<Float>()
        for b in 0..<count / 32 {
            let block = row + b * q4_0BlockBytes
            let (w0, w1, w2, w3) = unpackQ4_0(block)
            let sumi = dot32(w0, w1, w2, w3, UnsafeRawPointer(a.quants + b * 32))
            acc += smallIntToFloat(sumi) * (loadHalf(block) * a.scales[b])
        }
        return acc.sum()
    }
}
