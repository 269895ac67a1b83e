// Q5_1: blocks of 32 weights, 24 bytes: half scale d, half offset m, 4 bytes of high bits (bit j = 5th bit of
// weight j), 16 bytes of nibbles (byte j: weight j low, weight j+16 high); value = d · (5-bit value) + m. Dot
// products read Q8_1 activations, as Q4_1's do; llama.cpp multiplies Q5_1 with ggml_vec_dot_q5_1_q8_1 at every
// batch size (no repacked or tinyBLAS path takes it), whose AVX2 loop is Q4_1's with the fifth bit: the shared
// lane-block loop with the offsets (LaneBlocks.swift).

/// Bytes per Q5_1 block.
@inlinable public var q5_1BlockBytes: Int { 24 }

/// Q5_1 weights.
public enum Q5_1Rows: LaneBlocks {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q5_1BlockBytes, activationFormat: .q8_1)
    }
    @inlinable public static var offsetByte: Int? { 2 }

    /// Dequantizes `count` (a multiple of 32) Q5_1 weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 32 {
            let block = row + b * q5_1BlockBytes
            let d = loadHalf(block)
            let m = loadHalf(block, 2)
            let qh = block.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
            let q = (block + 8).assumingMemoryBound(to: UInt8.self)
            for j in 0..<16 {
                let h0 = Int32((qh >> UInt32(j)) & 1) << 4
                let h1 = Int32((qh >> UInt32(j + 16)) & 1) << 4
                out[b * 32 + j] = Float(Int32(q[j] & 0x0F) | h0) * d + m
                out[b * 32 + j + 16] = Float(Int32(q[j] >> 4) | h1) * d + m
            }
        }
    }

    /// The block's 5-bit values (0…31), even and odd elements: Q4_1's nibbles with the high bits added.
    @inline(__always)
    @inlinable
    public static func lanes(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>) {
        let (w0, w1, w2, w3) = unpackFiveBitValues(block + 4)
        return (SIMD16(lowHalf: w0, highHalf: w2), SIMD16(lowHalf: w1, highHalf: w3))
    }

    /// Unsigned values: ggml's `mul_sum_us8_pairs_float`, as for Q4_1.
    @inline(__always)
    @inlinable
    public static func laneSums(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>)
        -> SIMD8<Float>
    {
        nibbleLaneFloats(even, odd, pairs)
    }
}
