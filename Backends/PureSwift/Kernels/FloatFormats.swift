// Unquantized weights: F32, F16 and BF16 rows. Their dot products read activations rounded to the weight's own
// precision (as ggml converts them), kept as floats. For F16/BF16 the prepared activations of every full group of
// 16 are stored as its 8 even values then its 8 odd values, matching how a 16-value load of halves splits into
// even and odd lanes; a tail shorter than 16 stays in order.

/// Reorders each full group of 16 floats into even-then-odd order (the layout the F16/BF16 dot products read).
@inline(__always)
@inlinable
func interleaveForHalves(_ x: UnsafeMutablePointer<Float>, count: Int) {
    var tmp = SIMD16<Float>()
    for g in 0..<count / 16 {
        let p = x + 16 * g
        for i in 0..<8 {
            tmp[i] = p[2 * i]
            tmp[8 + i] = p[2 * i + 1]
        }
        for i in 0..<16 { p[i] = tmp[i] }
    }
}

/// Σ row · activations for 16-bit weights, sixteen at a time: `even` and `odd` widen the low and high halves of
/// eight 32-bit pairs (the even and odd weights), `scalar` one weight of the tail.
@inline(__always)
@inlinable
func dotSixteenBit(
    _ row: UnsafeRawPointer, _ a: ActivationRow, count: Int, even: (SIMD8<UInt32>) -> SIMD8<Float>,
    odd: (SIMD8<UInt32>) -> SIMD8<Float>, scalar: (UInt16) -> Float
) -> Float {
    var acc = SIMD8<Float>()
    let x = UnsafeRawPointer(a.floats)
    var i = 0
    while i + 16 <= count {
        let pairs = row.loadUnaligned(fromByteOffset: 2 * i, as: SIMD8<UInt32>.self)
        acc += even(pairs) * x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        acc += odd(pairs) * x.loadUnaligned(fromByteOffset: 4 * i + 32, as: SIMD8<Float>.self)
        i += 16
    }
    var sum = acc.sum()
    while i < count {
        sum += scalar(row.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) * a.floats[i]
        i += 1
    }
    return sum
}

/// F32 weights.
public enum F32Rows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 4, activationFormat: .f32)
    }

    /// Dequantizes (copies) `count` F32 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = row.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) }
    }

    /// Σ row · activations (F32 weights × F32 activations).
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc0 = SIMD8<Float>()
        var acc1 = SIMD8<Float>()
        let x = UnsafeRawPointer(a.floats)
        var i = 0
        while i + 16 <= count {
            acc0 +=
                row.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
                * x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            acc1 +=
                row.loadUnaligned(fromByteOffset: 4 * i + 32, as: SIMD8<Float>.self)
                * x.loadUnaligned(fromByteOffset: 4 * i + 32, as: SIMD8<Float>.self)
            i += 16
        }
        var sum = (acc0 + acc1).sum()
        while i < count {
            sum += row.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) * a.floats[i]
            i += 1
        }
        return sum
    }
}

/// F16 weights.
public enum F16Rows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 2, activationFormat: .f16)
    }

    /// Dequantizes `count` F16 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = halfToFloat(row.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) }
    }

    /// Σ row · activations (F16 weights × half-rounded activations in even/odd order).
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBit(
            row, a, count: count, even: { halvesToFloats($0 & 0xFFFF) }, odd: { halvesToFloats($0 &>> 16) },
            scalar: halfToFloat)
    }
}

/// BF16 weights.
public enum BF16Rows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 2, activationFormat: .bf16)
    }

    /// Dequantizes `count` BF16 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = bfloat16ToFloat(row.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) }
    }

    /// Σ row · activations (BF16 weights × bfloat16-rounded activations in even/odd order).
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBit(
            row, a, count: count, even: { unsafeBitCast($0 &<< 16, to: SIMD8<Float>.self) },
            odd: { unsafeBitCast($0 & 0xFFFF_0000, to: SIMD8<Float>.self) }, scalar: bfloat16ToFloat)
    }
}
