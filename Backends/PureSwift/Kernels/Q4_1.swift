// Q4_1: blocks of 32 weights, 20 bytes: half scale d, half offset m, then 16 bytes of nibbles (byte j: weight j
// low, weight j+16 high); value = d · nibble + m. Dot products read Q8_1 activations, whose per-block sums carry
// the offset term: Σ (d·q + m)·(d'·q') = d·d'·Σ q·q' + m·(d'·Σ q').

/// Bytes per Q4_1 block.
@inlinable public var q4_1BlockBytes: Int { 20 }

/// Dequantizes `count` (a multiple of 32) Q4_1 weights at `row` into `out`.
@inlinable
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

/// One Q4_1 block's weights as 16-bit lanes for the lane sums against Q8_1 activations in the pair layout
/// (`ActivationRow.pairs`): lane l sums the products of elements 4l…4l+3, as ggml's `mul_sum_us8_pairs_float`
/// groups them.
///
/// Byte j of the block holds element j (low nibble) and j+16 (high nibble); read as eight 16-bit lanes, lane i
/// holds elements 2i, 2i+1 (low nibbles) and 2i+16, 2i+17 (high nibbles). Masks and shifts give the even elements
/// (0, 2, …, 30) and the odd ones (1, 3, …, 31) as 16-bit lanes for `nibbleLaneFloats`.
@inline(__always)
@inlinable
func unpackQ4_1(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>) {
    let raw = (block + 4).loadUnaligned(as: SIMD8<UInt16>.self)
    let nibbles = SIMD16<UInt16>(lowHalf: raw, highHalf: raw &>> 4) & 0x0F0F
    return (
        unsafeBitCast(nibbles & 0x00FF, to: SIMD16<Int16>.self), unsafeBitCast(nibbles &>> 8, to: SIMD16<Int16>.self)
    )
}

/// Σ row · activations over `count` values (Q4_1 weights × Q8_1 activations), rounded as llama.cpp's
/// ggml_vec_dot_q4_1_q8_1 (AVX2) rounds: eight float lanes accumulated as `fma(dw·da, lane, acc)`, the offsets
/// `fma(m, s, offsets)`, reduced as hsum_float_8.
@inline(__always)
@inlinable
public func dotQ4_1(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    let halves = halfToFloatTable
    var acc = SIMD8<Float>()
    var offsets: Float = 0
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let w = unpackQ4_1(block)
        let lanes = nibbleLaneFloats(w.even, w.odd, a.pairs + b * 32)
        offsets = offsets.addingProduct(loadHalf(block, 2, halves), a.sums[b])
        acc = acc.addingProduct(SIMD8(repeating: loadHalf(block, 0, halves) * a.scales[b]), lanes)
    }
    return llamaHorizontalSum(acc) + offsets
}

/// Four dot products of one Q4_1 row with the four activation rows `a`, `a` + `rowStride` values, … (consecutive
/// rows of a `QuantizedActivations` buffer), each rounded as `dotQ4_1`. The row is unpacked once per block for all
/// four; the activations are addressed from one base so that the loop keeps its pointers in registers.
@inline(__always)
@inlinable
public func dot4Q4_1(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
    let halves = halfToFloatTable
    let scaleStride = rowStride / 32
    var acc0 = SIMD8<Float>()
    var acc1 = SIMD8<Float>()
    var acc2 = SIMD8<Float>()
    var acc3 = SIMD8<Float>()
    var offsets = SIMD4<Float>()
    var pairs = UnsafePointer(a.pairs)
    var scales = UnsafePointer(a.scales)
    var sums = UnsafePointer(a.sums)
    for b in 0..<count / 32 {
        let block = row + b * q4_1BlockBytes
        let (even, odd) = unpackQ4_1(block)
        let d = loadHalf(block, 0, halves)
        let ds = SIMD4(scales[0], scales[scaleStride], scales[2 * scaleStride], scales[3 * scaleStride]) * d
        acc0 = acc0.addingProduct(SIMD8(repeating: ds[0]), nibbleLaneFloats(even, odd, pairs))
        acc1 = acc1.addingProduct(SIMD8(repeating: ds[1]), nibbleLaneFloats(even, odd, pairs + rowStride))
        acc2 = acc2.addingProduct(
            SIMD8(repeating: ds[2]), nibbleLaneFloats(even, odd, pairs + 2 * rowStride))
        acc3 = acc3.addingProduct(
            SIMD8(repeating: ds[3]), nibbleLaneFloats(even, odd, pairs + 3 * rowStride))
        let s = SIMD4(sums[0], sums[scaleStride], sums[2 * scaleStride], sums[3 * scaleStride])
        offsets = offsets.addingProduct(SIMD4(repeating: loadHalf(block, 2, halves)), s)
        pairs += 32
        scales += 1
        sums += 1
    }
    return SIMD4(
        llamaHorizontalSum(acc0), llamaHorizontalSum(acc1), llamaHorizontalSum(acc2), llamaHorizontalSum(acc3))
        + offsets
}
