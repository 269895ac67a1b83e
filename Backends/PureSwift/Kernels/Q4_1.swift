// Q4_1: blocks of 32 weights, 20 bytes: half scale d, half offset m, then 16 bytes of nibbles (byte j: weight j
// low, weight j+16 high); value = d · nibble + m. Dot products read Q8_1 activations, whose per-block sums carry
// the offset term: Σ (d·q + m)·(d'·q') = d·d'·Σ q·q' + m·(d'·Σ q').

/// Bytes per Q4_1 block.
@inlinable public var q4_1BlockBytes: Int { 20 }

/// Q4_1 weights: products on the shared lane-block loop (LaneBlocks.swift), with the offsets.
public enum Q4_1Rows: LaneBlocks {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q4_1BlockBytes, activationFormat: .q8_1)
    }
    @inlinable public static var offsetByte: Int? { 2 }

    @inline(__always)
    @inlinable
    public static func lanes(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>) {
        unpackQ4_1(block)
    }

    /// Unsigned nibbles: ggml's `mul_sum_us8_pairs_float`.
    @inline(__always)
    @inlinable
    public static func laneSums(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>)
        -> SIMD8<Float>
    {
        nibbleLaneFloats(even, odd, pairs)
    }

    /// Dequantizes `count` (a multiple of 32) Q4_1 weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
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
