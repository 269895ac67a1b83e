// Q4_1: blocks of 32 weights, 20 bytes: half scale d, half offset m, then 16 bytes of nibbles (byte j: weight j
// low, weight j+16 high); value = d · nibble + m. Dot products read Q8_1 activations, whose per-block sums carry
// the offset term: Σ (d·q + m)·(d'·q') = d·d'·Σ q·q' + m·(d'·Σ q').

/// Bytes per Q4_1 block.
public let q4_1BlockBytes = 20

/// Dequantizes `count` (a multiple of 32) Q4_1 weights at `row` into `out`.
public func dequantizeRowQ4_1(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let d = loadHalf(block)
        let m = loadHalf(block, 2)
        let q = (block + 4).assumingMemoryBound(to: UInt8.self)
        for j in 0..<16 {
            out[b * 32 + j] = Float(q[j] & 0x0F) * d + m
            out[b * 32 + j + 16] = Float(q[j] >> 4) * d + m
        }
    }
}

@inline(__always)
func unpackQ4_1(_ block: UnsafeRawPointer) -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
    let raw = (block + 4).loadUnaligned(as: SIMD8<Int16>.self)
    let mask = SIMD8<Int16>(repeating: 0x0F)
    return (raw & mask, (raw &>> 8) & mask, (raw &>> 4) & mask, (raw &>> 12) & mask)
}

/// Σ row · activations over `count` values (Q4_1 weights × Q8_1 activations).
@inline(__always)
public func dotQ4_1(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var acc = SIMD4<Float>()
    var offsets: Float = 0
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let (w0, w1, w2, w3) = unpackQ4_1(block)
        let sumi = dot32(w0, w1, w2, w3, UnsafeRawPointer(a.quants + b * 32))
        acc += smallIntToFloat(sumi) * (loadHalf(block) * a.scales[b])
        offsets += loadHalf(block, 2) * a.sums[b]
    }
    return acc.sum() + offsets
}

/// Four dot products of one Q4_1 row with four activation rows.
@inline(__always)
public func dot4Q4_1(
    _ row: UnsafeRawPointer, _ a0: ActivationRow, _ a1: ActivationRow, _ a2: ActivationRow, _ a3: ActivationRow,
    count: Int
) -> SIMD4<Float> {
    var acc0 = SIMD4<Float>()
    var acc1 = SIMD4<Float>()
    var acc2 = SIMD4<Float>()
    var acc3 = SIMD4<Float>()
    var offsets = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let (w0, w1, w2, w3) = unpackQ4_1(block)
        let d = loadHalf(block)
        let m = loadHalf(block, 2)
        acc0 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a0.quants + b * 32))) * (d * a0.scales[b])
        acc1 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a1.quants + b * 32))) * (d * a1.scales[b])
        acc2 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a2.quants + b * 32))) * (d * a2.scales[b])
        acc3 += smallIntToFloat(dot32(w0, w1, w2, w3, UnsafeRawPointer(a3.quants + b * 32))) * (d * a3.scales[b])
        offsets += m * SIMD4(a0.sums[b], a1.sums[b], a2.sums[b], a3.sums[b])
    }
    return SIMD4(acc0.sum(), acc1.sum(), acc2.sum(), acc3.sum()) + offsets
}
