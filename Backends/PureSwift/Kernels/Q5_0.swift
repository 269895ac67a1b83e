// Q5_0: blocks of 32 weights, 22 bytes: half scale d, 4 bytes of high bits (bit j = 5th bit of weight j), 16 bytes
// of nibbles (byte j: weight j low, weight j+16 high); value = d · (5-bit value − 16). Dot products read Q8_0.

/// Bytes per Q5_0 block.
@inlinable public var q5_0BlockBytes: Int { 22 }

/// Dequantizes `count` (a multiple of 32) Q5_0 weights at `row` into `out`.
@inlinable
public func dequantizeRowQ5_0(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
    for b in 0..<count / 32 {
        let block = row + b * q5_0BlockBytes
        let d = loadHalf(block)
        let qh = block.loadUnaligned(fromByteOffset: 2, as: UInt32.self)
        let q = (block + 6).assumingMemoryBound(to: UInt8.self)
        for j in 0..<16 {
            let h0 = Int32((qh >> UInt32(j)) & 1) << 4
            let h1 = Int32((qh >> UInt32(j + 16)) & 1) << 4
            out[b * 32 + j] = Float((Int32(q[j] & 0x0F) | h0) - 16) * d
            out[b * 32 + j + 16] = Float((Int32(q[j] >> 4) | h1) - 16) * d
        }
    }
}

/// 0x10 in byte k of entry i when bit k of i is set: spreads eight high bits over eight bytes.
// Filled once by its initializer, read-only afterwards: safe to share between threads.
@usableFromInline nonisolated(unsafe) let highBitBytes: UnsafePointer<UInt64> = {
    let table = UnsafeMutablePointer<UInt64>.allocate(capacity: 256)
    for i in 0..<256 {
        var v: UInt64 = 0
        for k in 0..<8 where i & (1 << k) != 0 { v |= 0x10 << (8 * UInt64(k)) }
        table[i] = v
    }
    return UnsafePointer(table)
}()

@inline(__always)
@inlinable
func unpackQ5_0(_ block: UnsafeRawPointer) -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
    let raw = (block + 6).loadUnaligned(as: SIMD8<Int16>.self)
    let qh0 = block.load(fromByteOffset: 2, as: UInt8.self)
    let qh1 = block.load(fromByteOffset: 3, as: UInt8.self)
    let qh2 = block.load(fromByteOffset: 4, as: UInt8.self)
    let qh3 = block.load(fromByteOffset: 5, as: UInt8.self)
    let highLow = unsafeBitCast(SIMD2<UInt64>(highBitBytes[Int(qh0)], highBitBytes[Int(qh1)]), to: SIMD8<Int16>.self)
    let highHigh = unsafeBitCast(SIMD2<UInt64>(highBitBytes[Int(qh2)], highBitBytes[Int(qh3)]), to: SIMD8<Int16>.self)
    let nibbles = SIMD8<Int16>(repeating: 0x0F0F)
    let low = (raw & nibbles) | highLow  // weights 0..<16 as bytes 0…31
    let high = ((raw &>> 4) & nibbles) | highHigh  // weights 16..<32
    let byte = SIMD8<Int16>(repeating: 0xFF)
    let sixteen = SIMD8<Int16>(repeating: 16)
    return ((low & byte) &- sixteen, (low &>> 8) &- sixteen, (high & byte) &- sixteen, (high &>> 8) &- sixteen)
}

/// The eight lane sums of one Q5_0 block times Q8_0 activations in the pair layout: lane l sums the products of
/// elements 4l…4l+3, as ggml_vec_dot_q5_0_q8_0 (AVX2) and llamafile's tinyBLAS_Q0_AVX group them.
@inline(__always)
@inlinable
func lanesQ5_0(_ block: UnsafeRawPointer, _ pairs: UnsafePointer<Int16>) -> SIMD8<Int32> {
    let (w0, w1, w2, w3) = unpackQ5_0(block)
    return pairLanes(SIMD16(lowHalf: w0, highHalf: w2), SIMD16(lowHalf: w1, highHalf: w3), pairs)
}

/// Σ row · activations over `count` values (Q5_0 weights × Q8_0 activations), rounded as llama.cpp's AVX2
/// ggml_vec_dot_q5_0_q8_0 and tinyBLAS_Q0_AVX round: eight float lanes accumulated as `fma(dw·da, lane, acc)`,
/// hsum_float_8.
@inline(__always)
@inlinable
public func dotQ5_0(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    let halves = halfToFloatTable
    var acc = SIMD8<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q5_0BlockBytes
        let lanes = lanesQ5_0(block, a.pairs + b * 32)
        acc = acc.addingProduct(SIMD8(repeating: loadHalf(block, 0, halves) * a.scales[b]), smallIntToFloat(lanes))
    }
    return llamaHorizontalSum(acc)
}

/// Four dot products of one Q5_0 row with the four activation rows `a`, `a` + `rowStride` values, …, each rounded
/// as `dotQ5_0`.
@inline(__always)
@inlinable
public func dot4Q5_0(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
    let halves = halfToFloatTable
    let scaleStride = rowStride / 32
    var acc0 = SIMD8<Float>()
    var acc1 = SIMD8<Float>()
    var acc2 = SIMD8<Float>()
    var acc3 = SIMD8<Float>()
    var pairs = UnsafePointer(a.pairs)
    var scales = UnsafePointer(a.scales)
    for b in 0..<count / 32 {
        let block = row + b * q5_0BlockBytes
        let (w0, w1, w2, w3) = unpackQ5_0(block)
        let even = SIMD16(lowHalf: w0, highHalf: w2)
        let odd = SIMD16(lowHalf: w1, highHalf: w3)
        let ds =
            SIMD4(scales[0], scales[scaleStride], scales[2 * scaleStride], scales[3 * scaleStride])
            * loadHalf(block, 0, halves)
        acc0 = acc0.addingProduct(SIMD8(repeating: ds[0]), smallIntToFloat(pairLanes(even, odd, pairs)))
        acc1 = acc1.addingProduct(SIMD8(repeating: ds[1]), smallIntToFloat(pairLanes(even, odd, pairs + rowStride)))
        acc2 = acc2.addingProduct(
            SIMD8(repeating: ds[2]), smallIntToFloat(pairLanes(even, odd, pairs + 2 * rowStride)))
        acc3 = acc3.addingProduct(
            SIMD8(repeating: ds[3]), smallIntToFloat(pairLanes(even, odd, pairs + 3 * rowStride)))
        pairs += 32
        scales += 1
    }
    return SIMD4(
        llamaHorizontalSum(acc0), llamaHorizontalSum(acc1), llamaHorizontalSum(acc2), llamaHorizontalSum(acc3))
}
