// Q5_0: blocks of 32 weights, 22 bytes: half scale d, 4 bytes of high bits (bit j = 5th bit of weight j), 16 bytes
// of nibbles (byte j: weight j low, weight j+16 high); value = d · (5-bit value − 16). Dot products read Q8_0.

/// Bytes per Q5_0 block.
@inlinable public var q5_0BlockBytes: Int { 22 }

/// Q5_0 weights: products on the shared lane-block loop (LaneBlocks.swift).
public enum Q5_0Rows: LaneBlocks {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q5_0BlockBytes, activationFormat: .q8_0)
    }

    @inline(__always)
    @inlinable
    public static func lanes(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>) {
        let (w0, w1, w2, w3) = unpackQ5_0(block)
        return (SIMD16(lowHalf: w0, highHalf: w2), SIMD16(lowHalf: w1, highHalf: w3))
    }

    /// Dequantizes `count` (a multiple of 32) Q5_0 weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
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

/// The 32 five-bit values (0…31) at `bits`: 4 bytes of high bits (bit j for value j), then 16 bytes of nibbles
/// (byte j: value j low, value j+16 high), as four vectors of eight: even and odd values of 0..<16, then of 16..<32.
@inline(__always)
@inlinable
func unpackFiveBitValues(_ bits: UnsafeRawPointer) -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
    let raw = (bits + 4).loadUnaligned(as: SIMD8<Int16>.self)
    let qh0 = bits.load(fromByteOffset: 0, as: UInt8.self)
    let qh1 = bits.load(fromByteOffset: 1, as: UInt8.self)
    let qh2 = bits.load(fromByteOffset: 2, as: UInt8.self)
    let qh3 = bits.load(fromByteOffset: 3, as: UInt8.self)
    let highLow = unsafeBitCast(SIMD2<UInt64>(highBitBytes[Int(qh0)], highBitBytes[Int(qh1)]), to: SIMD8<Int16>.self)
    let highHigh = unsafeBitCast(SIMD2<UInt64>(highBitBytes[Int(qh2)], highBitBytes[Int(qh3)]), to: SIMD8<Int16>.self)
    let nibbles = SIMD8<Int16>(repeating: 0x0F0F)
    let low = (raw & nibbles) | highLow  // values 0..<16 as bytes 0…31
    let high = ((raw &>> 4) & nibbles) | highHigh  // values 16..<32
    let byte = SIMD8<Int16>(repeating: 0xFF)
    return (low & byte, low &>> 8, high & byte, high &>> 8)
}

/// One Q5_0 block's weights (−16…15) as `unpackFiveBitValues` orders them.
@inline(__always)
@inlinable
func unpackQ5_0(_ block: UnsafeRawPointer) -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
    let (w0, w1, w2, w3) = unpackFiveBitValues(block + 2)
    let sixteen = SIMD8<Int16>(repeating: 16)
    return (w0 &- sixteen, w1 &- sixteen, w2 &- sixteen, w3 &- sixteen)
}
