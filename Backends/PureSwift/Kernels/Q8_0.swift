// Q8_0: blocks of 32 weights, 34 bytes: half scale d, then 32 int8; value = d · q. Dot products read Q8_0.

/// Bytes per Q8_0 block.
@inlinable public var q8_0BlockBytes: Int { 34 }

/// Dequantizes `count` (a multiple of 32) Q8_0 weights at `row` into `out`.
@inlinable
public func dequantizeRowQ8_0(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let d = loadHalf(block)
        let q = (block + 2).assumingMemoryBound(to: Int8.self)
        for j in 0..<32 { out[b * 32 + j] = Float(q[j]) * d }
    }
}

/// The eight lane sums of one Q8_0 block times Q8_0 activations in the pair layout: lane l sums the products of
/// elements 4l…4l+3 (as llamafile's tinyBLAS `updot` groups them). The 32 weights read as sixteen 16-bit lanes
/// hold the even elements in their low bytes and the odd ones in their high bytes.
@inline(__always)
@inlinable
func lanesQ8_0(_ block: UnsafeRawPointer, _ pairs: UnsafePointer<Int16>) -> SIMD8<Int32> {
    let w = (block + 2).loadUnaligned(as: SIMD16<Int16>.self)
    return pairLanes((w &<< 8) &>> 8, w &>> 8, pairs)
}

/// Σ row · activations over `count` values (Q8_0 weights × Q8_0 activations), rounded as llama.cpp's tinyBLAS_Q0_AVX
/// (and ggml_vec_dot_q8_0_q8_0) rounds: eight float lanes accumulated as `fma(dw·da, lane, acc)`, hsum_float_8.
@inline(__always)
@inlinable
public func dotQ8_0(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    let halves = halfToFloatTable
    var acc = SIMD8<Float>()
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let lanes = lanesQ8_0(block, a.pairs + b * 32)
        acc = acc.addingProduct(SIMD8(repeating: loadHalf(block, 0, halves) * a.scales[b]), smallIntToFloat(lanes))
    }
    return llamaHorizontalSum(acc)
}

/// Four dot products of one Q8_0 row with the four activation rows `a`, `a` + `rowStride` values, … (see
/// `dot4Q4_1`), each rounded as `dotQ8_0`.
@inline(__always)
@inlinable
public func dot4Q8_0(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
    let halves = halfToFloatTable
    let scaleStride = rowStride / 32
    var acc0 = SIMD8<Float>()
    var acc1 = SIMD8<Float>()
    var acc2 = SIMD8<Float>()
    var acc3 = SIMD8<Float>()
    var pairs = UnsafePointer(a.pairs)
    var scales = UnsafePointer(a.scales)
    for b in 0..<count / 32 {
        let block = row + b * q8_0BlockBytes
        let w = (block + 2).loadUnaligned(as: SIMD16<Int16>.self)
        let even = (w &<< 8) &>> 8
        let odd = w &>> 8
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
