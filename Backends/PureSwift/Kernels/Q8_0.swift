// Q8_0: blocks of 32 weights, 34 bytes: half scale d, then 32 int8; value = d · q. Dot products read Q8_0.

/// Bytes per Q8_0 block.
@inlinable public var q8_0BlockBytes: Int { 34 }

/// Q8_0 weights: products on the shared lane-block loop (LaneBlocks.swift), as llamafile's tinyBLAS `updot` groups
/// them. The 32 weights read as sixteen 16-bit lanes hold the even elements in their low bytes and the odd ones in
/// their high bytes.
public enum Q8_0Rows: LaneBlocks {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q8_0BlockBytes, activationFormat: .q8_0)
    }

    @inline(__always)
    @inlinable
    public static func lanes(_ block: UnsafeRawPointer) -> (even: SIMD16<Int16>, odd: SIMD16<Int16>) {
        let w = (block + 2).loadUnaligned(as: SIMD16<Int16>.self)
        return ((w &<< 8) &>> 8, w &>> 8)
    }

    /// Dequantizes `count` (a multiple of 32) Q8_0 weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 32 {
            let block = row + b * q8_0BlockBytes
            let d = loadHalf(block)
            let q = (block + 2).assumingMemoryBound(to: Int8.self)
            for j in 0..<32 { out[b * 32 + j] = Float(q[j]) * d }
        }
    }
}
