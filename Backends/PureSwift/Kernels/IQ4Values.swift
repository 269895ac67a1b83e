// The non-linear 4-bit values of IQ4_NL and IQ4_XS (ggml-common.h's kvalues_iq4nl).

/// kvalues_iq4nl: the weight each 4-bit index stands for.
@inlinable public var iq4NLValues: SIMD16<Int16> {
    SIMD16(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
}

/// The values of 16 packed index bytes at `q`, low nibbles (`high` false) or high nibbles, as even (bytes 0, 2, …,
/// 14) and odd (1, 3, …, 15) 16-bit lanes, the layout `dot16` reads.
@inline(__always)
@inlinable
func iq4Nibbles(_ q: UnsafeRawPointer, high: Bool) -> (even: SIMD8<Int16>, odd: SIMD8<Int16>) {
    let table = iq4NLValues
    let p = q.assumingMemoryBound(to: UInt8.self)
    let shift: UInt8 = high ? 4 : 0
    var even = SIMD8<Int16>()
    var odd = SIMD8<Int16>()
    for i in 0..<8 {
        even[i] = table[Int((p[2 * i] >> shift) & 15)]
        odd[i] = table[Int((p[2 * i + 1] >> shift) & 15)]
    }
    return (even, odd)
}
