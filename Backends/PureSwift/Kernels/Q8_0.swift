// Q8_0: blocks of 32 weights, 34 bytes: half scale d, then 32 int8; value = d · q. Dot products read Q8_0.

/// Bytes per Q8_0 block.
public let q8_0BlockBytes = 34

/// Dequantizes `count` (a multiple of 32) Q8_0 weights at `row` into `out`.
public func dequantizeRowQ8_0(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let d = loadHalf(block)
        let q = (block + 2).assumingMemoryBound(to: Int8.self)
        for j in 0..<32 { out[b * 32 + j] = Float(q[j]) * d }
    }
}

@inline(__always)
func dotBlockQ8_0(_ block: UnsafeRawPointer, _ a: UnsafeRawPointer) -> SIMD4<Int32> {
    dot16Int8(block.loadUnaligned(fromByteOffset: 2, as: SIMD8<Int16>.self), a)
        &+ dot16Int8(block.loadUnaligned(fromByteOffset: 18, as: SIMD8<Int16>.self), a + 16)
}

/// Σ row · activations over `count` values (Q8_0 weights × Q8_0 activations).
@inline(__always)
public func dotQ8_0(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var acc = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let sumi = dotBlockQ8_0(block, UnsafeRawPointer(a.quants + b * 32))
        acc += smallIntToFloat(sumi) * (loadHalf(block) * a.scales[b])
    }
    return acc.sum()
}

/// Four dot products of one Q8_0 row with four activation rows.
@inline(__always)
public func dot4Q8_0(
    _ row: UnsafeRawPointer, _ a0: ActivationRow, _ a1: ActivationRow, _ a2: ActivationRow, _ a3: ActivationRow,
    count: Int
) -> SIMD4<Float> {
    var acc0 = SIMD4<Float>()
    var acc1 = SIMD4<Float>()
    var acc2 = SIMD4<Float>()
    var acc3 = SIMD4<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let w0 = block.loadUnaligned(fromByteOffset: 2, as: SIMD8<Int16>.self)
        let w1 = block.loadUnaligned(fromByteOffset: 18, as: SIMD8<Int16>.self)
        let d = loadHalf(block)
        @inline(__always) func one(_ a: ActivationRow) -> SIMD4<Float> {
            let x = UnsafeRawPointer(a.quants + b * 32)
            return smallIntToFloat(dot16Int8(w0, x) &+ dot16Int8(w1, x + 16)) * (d * a.scales[b])
        }
        acc0 += one(a0)
        acc1 += one(a1)
        acc2 += one(a2)
        acc3 += one(a3)
    }
    return SIMD4(acc0.sum(), acc1.sum(), acc2.sum(), acc3.sum())
}
