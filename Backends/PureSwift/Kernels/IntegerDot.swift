// Shared building blocks of the integer dot products. They use only lane-wise integer builtins on SIMD8<Int16>
// and bit casts (no element-type conversions, which Swift lowers to slow generic code on x86-64): a 16-byte load
// viewed as eight 16-bit lanes holds bytes 2i (low) and 2i+1 (high), which shifts split into "even" and "odd"
// byte lanes.

/// Sign-extended even bytes (0, 2, …, 14) of 16 bytes viewed as eight 16-bit lanes.
@inline(__always)
@inlinable
func evenBytes(_ v: SIMD8<Int16>) -> SIMD8<Int16> { (v &<< 8) &>> 8 }

/// Sign-extended odd bytes (1, 3, …, 15).
@inline(__always)
@inlinable
func oddBytes(_ v: SIMD8<Int16>) -> SIMD8<Int16> { v &>> 8 }

/// Multiplies 16-bit lanes and adds adjacent products into 32-bit lanes: lane i = a₂ᵢb₂ᵢ + a₂ᵢ₊₁b₂ᵢ₊₁. LLVM turns
/// this pattern into one `pmaddwd`.
@inline(__always)
@inlinable
func multiplyAddPairs(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>) -> SIMD4<Int32> {
    let p = SIMD8<Int32>(truncatingIfNeeded: a) &* SIMD8<Int32>(truncatingIfNeeded: b)
    return p.evenHalf &+ p.oddHalf
}

/// ggml's eight lane sums of one 32-value block from its weights as 16-bit lanes, `even` (element 2j in lane j)
/// and `odd` (element 2j+1), and the activations in the pair layout at `pairs`: lane l sums elements 4l…4l+3.
///
/// Each pair sum `s_j = w₂ⱼa₂ⱼ + w₂ⱼ₊₁a₂ⱼ₊₁` fits in 16 bits for 4-bit weights and for int8 weights times
/// activations within ±127 (at most 2·128·127 = 32512), so the products stay in 16-bit lanes (Swift's widening
/// vector conversions are out-of-line generic calls); lane l is then `s₂ₗ + s₂ₗ₊₁`, read as the two halves of a
/// 32-bit lane.
@inline(__always)
@inlinable
func pairLanes(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>) -> SIMD8<Int32> {
    let s = even &* loadPairs(pairs) &+ odd &* loadPairs(pairs + 16)
    let x = unsafeBitCast(s, to: SIMD8<Int32>.self)
    return ((x &<< 16) &>> 16) &+ (x &>> 16)
}

/// `pairLanes` for 4-bit weights, as floats: there the whole lane sum fits in 16 bits (at most 4·15·127 = 7620), so
/// it can be formed in the high half of each 32-bit lane, `(x + x << 16) >> 16`, one instruction fewer. (Same-width
/// int → float conversion is one instruction, exact below 2²⁴.)
@inline(__always)
@inlinable
func nibbleLaneFloats(_ even: SIMD16<Int16>, _ odd: SIMD16<Int16>, _ pairs: UnsafePointer<Int16>) -> SIMD8<Float> {
    let s = even &* loadPairs(pairs) &+ odd &* loadPairs(pairs + 16)
    let x = unsafeBitCast(s, to: SIMD8<Int32>.self)
    return SIMD8<Float>((x &+ (x &<< 16)) &>> 16)
}

/// Sixteen activations of the pair layout (`ActivationRow.pairs`).
@inline(__always)
@inlinable
func loadPairs(_ p: UnsafePointer<Int16>) -> SIMD16<Int16> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Int16>.self)
}

/// Exact int → float for |v| < 2²² by the 1.5·2²³ magic number (eight lanes).
@inline(__always)
@inlinable
func smallIntToFloat(_ v: SIMD8<Int32>) -> SIMD8<Float> {
    unsafeBitCast(v &+ 0x4B40_0000, to: SIMD8<Float>.self) - 12_582_912
}

/// int → float rounded to nearest even, as `cvtdq2ps` converts, for any Int32: the high and low 16 bits convert
/// exactly and their sum is rounded once.
@inline(__always)
@inlinable
func intToFloat(_ v: SIMD8<Int32>) -> SIMD8<Float> {
    smallIntToFloat(v &>> 16) * 65536 + smallIntToFloat(v & 0xFFFF)
}

/// Exact int → float for |v| < 2²² by the 1.5·2²³ magic number.
@inline(__always)
@inlinable
func smallIntToFloat(_ v: SIMD4<Int32>) -> SIMD4<Float> {
    unsafeBitCast(v &+ 0x4B40_0000, to: SIMD4<Float>.self) - 12_582_912
}

/// Σ w·a over 32 values: weights as even/odd lanes of two 16-value halves, activations 32 int8 at `a`. Lane j
/// of the result sums elements 4j…4j+3 of the first half (j < 4 covers elements 0…15) plus the same of the second.
@inline(__always)
@inlinable
func dot32(
    _ w0e: SIMD8<Int16>, _ w0o: SIMD8<Int16>, _ w1e: SIMD8<Int16>, _ w1o: SIMD8<Int16>, _ a: UnsafeRawPointer
) -> SIMD4<Int32> {
    dot16(w0e, w0o, a) &+ dot16(w1e, w1o, a + 16)
}

/// Σ w·a over 16 values: weights as even/odd lanes, activations 16 int8 at `a`. Lane j sums elements 4j…4j+3.
@inline(__always)
@inlinable
func dot16(_ we: SIMD8<Int16>, _ wo: SIMD8<Int16>, _ a: UnsafeRawPointer) -> SIMD4<Int32> {
    let x = a.loadUnaligned(as: SIMD8<Int16>.self)
    return multiplyAddPairs(we, evenBytes(x)) &+ multiplyAddPairs(wo, oddBytes(x))
}

/// Reads a little-endian half at `p + offset` as a float, through the table.
@inline(__always)
@inlinable
func loadHalf(_ p: UnsafeRawPointer, _ offset: Int = 0) -> Float {
    halfToFloatTable[Int(p.loadUnaligned(fromByteOffset: offset, as: UInt16.self))]
}

/// `loadHalf` through a table the caller read once (the global's lazy-initialisation check stays out of loops).
@inline(__always)
@inlinable
func loadHalf(_ p: UnsafeRawPointer, _ offset: Int, _ table: UnsafePointer<Float>) -> Float {
    table[Int(p.loadUnaligned(fromByteOffset: offset, as: UInt16.self))]
}
