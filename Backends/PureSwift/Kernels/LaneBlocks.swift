// The product Q4_1, Q5_0, Q5_1 and Q8_0 share: blocks of 32 weights, a half scale d first (Q4_1: a half offset m after
// it), whose weights unpack into even and odd 16-bit lanes; times activations in the pair layout
// (`ActivationRow.pairs`) they give ggml's eight lane sums of four products, which accumulate as
// `fma(dw·da, lane, acc)` and reduce as hsum_float_8 — how llama.cpp's AVX2 ggml_vec_dot_q4_1_q8_1,
// ggml_vec_dot_q5_0_q8_0, ggml_vec_dot_q8_0_q8_0 and tinyBLAS_Q0_AVX round. The offsets of Q4_1 go through the
// activations' block sums: Σ (d·q + m)·(d'·q') = d·d'·Σ q·q' + m·(d'·Σ q'), accumulated as `fma(m, s, offsets)`
// and added last. A format only says how its blocks unpack (its file); the loops are here, once.

/// A format of 32-weight blocks with a half scale first, multiplied by pair-layout activations.
public protocol LaneBlocks: WeightType {
    /// Where in a block its half offset m is (Q4_1), or nil for formats without one.
    static var offsetByte: Int? { get }
    /// The block's weights: elements 0, 2, …, 30 and 1, 3, …, 31 as 16-bit lanes.
    static func lanes(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>)
    /// ggml's eight lane sums of the unpacked weights times the 32 pair-layout activations at `pairs`, as floats.
    static func laneSums(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>) -> SIMD8<Float>
}

extension LaneBlocks {
    @inline(__always) @inlinable public static var offsetByte: Int? { nil }

    /// Signed weights (−128…127): exact integer lane sums, converted.
    @inline(__always)
    @inlinable
    public static func laneSums(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>)
        -> SIMD8<Float>
    {
        smallIntToFloat(pairLanes(even, odd, pairs))
    }
}

/// Σ row · activations over `count` values for a `LaneBlocks` format.
@inline(__always)
@inlinable
public func dotLaneBlocks<F: LaneBlocks>(_ format: F.Type, _ row: UnsafeRawPointer, _ a: ActivationRow, count: Int)
    -> Float
{
    let halves = halfToFloatTable
    var acc = SIMD8<Float>()
    var offsets: Float = 0
    for b in 0..<count / 32 {
        let block = row + b * F.traits.blockBytes
        let (even, odd) = F.lanes(block)
        let lanes = F.laneSums(even, odd, a.pairs + b * 32)
        if let m = F.offsetByte { offsets = offsets.addingProduct(loadHalf(block, m, halves), a.sums[b]) }
        acc = acc.addingProduct(SIMD8(repeating: loadHalf(block, 0, halves) * a.scales[b]), lanes)
    }
    let sum = llamaHorizontalSum(acc)
    return F.offsetByte == nil ? sum : sum + offsets
}

/// Four dot products of one row with the four activation rows `a`, `a` + `rowStride` values, … (consecutive rows
/// of a `QuantizedActivations` buffer), each rounded as `dotLaneBlocks`. The row is unpacked once per block for all
/// four; the activations are addressed from one base so that the loop keeps its pointers in registers.
@inline(__always)
@inlinable
public func dot4LaneBlocks<F: LaneBlocks>(
    _ format: F.Type, _ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int
) -> SIMD4<Float> {
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
        let block = row + b * F.traits.blockBytes
        let (even, odd) = F.lanes(block)
        let ds =
            SIMD4(scales[0], scales[scaleStride], scales[2 * scaleStride], scales[3 * scaleStride])
            * loadHalf(block, 0, halves)
        acc0 = acc0.addingProduct(SIMD8(repeating: ds[0]), F.laneSums(even, odd, pairs))
        acc1 = acc1.addingProduct(SIMD8(repeating: ds[1]), F.laneSums(even, odd, pairs + rowStride))
        acc2 = acc2.addingProduct(SIMD8(repeating: ds[2]), F.laneSums(even, odd, pairs + 2 * rowStride))
        acc3 = acc3.addingProduct(SIMD8(repeating: ds[3]), F.laneSums(even, odd, pairs + 3 * rowStride))
        if let m = F.offsetByte {
            let s = SIMD4(sums[0], sums[scaleStride], sums[2 * scaleStride], sums[3 * scaleStride])
            offsets = offsets.addingProduct(SIMD4(repeating: loadHalf(block, m, halves)), s)
        }
        pairs += 32
        scales += 1
        sums += 1
    }
    let total = SIMD4(
        llamaHorizontalSum(acc0), llamaHorizontalSum(acc1), llamaHorizontalSum(acc2), llamaHorizontalSum(acc3))
    return F.offsetByte == nil ? total : total + offsets
}

extension LaneBlocks {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotLaneBlocks(Self.self, row, a, count: count)
    }

    @inline(__always)
    @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4LaneBlocks(Self.self, row, a, rowStride: rowStride, count: count)
    }
}
