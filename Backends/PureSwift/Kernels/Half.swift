/// Half-precision (IEEE binary16) and bfloat16 conversions by bit manipulation.
///
/// Swift compiled for the x86-64 baseline turns `Float16` conversions into library calls, far too slow for hot
/// loops, so the kernels use these instead. Both directions are exact: half → float is lossless and float → half
/// rounds to nearest even, as the F16C instructions ggml uses do.

/// The float value of the binary16 bit pattern `h`.
@inline(__always)
@inlinable
public func halfToFloat(_ h: UInt16) -> Float {
    let exponentMantissa = UInt32(h & 0x7FFF)
    let sign = UInt32(h & 0x8000) << 16
    let exponent = exponentMantissa >> 10
    let bits: UInt32
    if exponent == 0 {
        // Zero or subnormal: mantissa × 2⁻²⁴, computed exactly as (1 + m/2²³)·2⁻¹ − ½.
        bits = (Float(bitPattern: 0x3F00_0000 | exponentMantissa) - 0.5).bitPattern
    } else if exponent == 0x1F {
        bits = (exponentMantissa << 13) | 0x7F80_0000  // infinity or NaN (payload kept)
    } else {
        bits = (exponentMantissa << 13) &+ (112 << 23)
    }
    return Float(bitPattern: sign | bits)
}

/// The binary16 bit pattern nearest to `f` (ties to even; overflow gives infinity; NaN stays NaN).
@inline(__always)
@inlinable
public func floatToHalf(_ f: Float) -> UInt16 {
    var bits = f.bitPattern
    let sign = UInt16(truncatingIfNeeded: (bits >> 16) & 0x8000)
    bits &= 0x7FFF_FFFF
    let result: UInt16
    if bits >= 0x4780_0000 {
        // ≥ 65536 (after rounding anything ≥ 65520 overflows; handled below), infinity or NaN.
        result = bits > 0x7F80_0000 ? 0x7E00 | UInt16(truncatingIfNeeded: (bits >> 13) & 0x3FF) : 0x7C00
    } else if bits < 0x3880_0000 {
        // Below the smallest normal half: let the FPU round by adding a magic number (2⁻¹ scaled), exact RNE.
        let magic = Float(bitPattern: 0x3F00_0000)  // 0.5
        result = UInt16(truncatingIfNeeded: (Float(bitPattern: bits) + magic).bitPattern &- magic.bitPattern)
    } else {
        let mantissaOdd = (bits >> 13) & 1
        bits = bits &- (112 << 23) &+ 0xFFF &+ mantissaOdd
        result = bits >= 0x0F80_0000 ? 0x7C00 : UInt16(truncatingIfNeeded: bits >> 13)
    }
    return sign | result
}

/// `f` rounded to the nearest binary16 value, as a float.
@inline(__always)
@inlinable
public func roundToHalf(_ f: Float) -> Float { halfToFloat(floatToHalf(f)) }

/// The float value of the bfloat16 bit pattern `b`.
@inline(__always)
@inlinable
public func bfloat16ToFloat(_ b: UInt16) -> Float { Float(bitPattern: UInt32(b) << 16) }

/// The bfloat16 nearest to `f` (ties to even; NaN stays a quiet NaN), as ggml rounds.
@inline(__always)
@inlinable
public func floatToBFloat16(_ f: Float) -> UInt16 {
    let u = f.bitPattern
    if u & 0x7FFF_FFFF > 0x7F80_0000 { return UInt16(truncatingIfNeeded: (u >> 16) | 64) }
    return UInt16(truncatingIfNeeded: (u &+ (0x7FFF &+ ((u >> 16) & 1))) >> 16)
}

/// A 65 536-entry table of every half's float value: one load per conversion where a loop converts scalars
/// (block scales). 256 KiB, built once.
// Filled once by its initializer, read-only afterwards: safe to share between threads.
nonisolated(unsafe) public let halfToFloatTable: UnsafePointer<Float> = {
    let table = UnsafeMutablePointer<Float>.allocate(capacity: 65536)
    for i in 0..<65536 { table[i] = halfToFloat(UInt16(i)) }
    return UnsafePointer(table)
}()

/// Eight halves (in the low 16 bits of each lane) to floats, branch-free (all lanes integer/float builtins).
@inline(__always)
@inlinable
func halvesToFloats(_ h: SIMD8<UInt32>) -> SIMD8<Float> {
    let sign = (h & 0x8000) &<< 16
    let em = h & 0x7FFF
    let exponent = unsafeBitCast(em &>> 10, to: SIMD8<Int32>.self)
    // All ones where the exponent is 0 (zero/subnormal) or 31 (infinity/NaN).
    let isSubnormal = unsafeBitCast((exponent &- 1) &>> 31, to: SIMD8<UInt32>.self)
    let isSpecial = unsafeBitCast((30 &- exponent) &>> 31, to: SIMD8<UInt32>.self)
    let normal = (em &<< 13) &+ (112 << 23) &+ (isSpecial & (112 << 23))
    let subnormal =
        unsafeBitCast(unsafeBitCast(em | 0x3F00_0000, to: SIMD8<Float>.self) - 0.5, to: SIMD8<UInt32>.self)
    let bits = sign | (normal & ~isSubnormal) | (subnormal & isSubnormal)
    return unsafeBitCast(bits, to: SIMD8<Float>.self)
}

/// Eight little-endian halves at `p` as floats. Where Swift has `Float16` this is one vector conversion (one F16C
/// instruction in the AVX2 and AVX-512 kernel builds, one instruction on arm64); Apple platforms on x86-64 have no
/// `Float16`, so there it reads the table.
@inline(__always)
@inlinable
func loadHalves8(_ p: UnsafeRawPointer) -> SIMD8<Float> {
    #if arch(x86_64) && canImport(Darwin)
        let h = p.loadUnaligned(as: SIMD8<UInt16>.self)
        let t = halfToFloatTable
        return SIMD8(
            t[Int(h[0])], t[Int(h[1])], t[Int(h[2])], t[Int(h[3])], t[Int(h[4])], t[Int(h[5])], t[Int(h[6])],
            t[Int(h[7])])
    #else
        return SIMD8<Float>(p.loadUnaligned(as: SIMD8<Float16>.self))
    #endif
}

/// One little-endian half at `p + offset` as a float, converted as `loadHalves8` converts.
@inline(__always)
@inlinable
func convertHalf(_ p: UnsafeRawPointer, _ offset: Int) -> Float {
    #if arch(x86_64) && canImport(Darwin)
        return halfToFloatTable[Int(p.loadUnaligned(fromByteOffset: offset, as: UInt16.self))]
    #else
        return Float(p.loadUnaligned(fromByteOffset: offset, as: Float16.self))
    #endif
}
