// IQ4_NL: blocks of 32 weights, 18 bytes: half d, 16 bytes of 4-bit indices into `iq4NLValues`. Byte j holds
// weight j (low nibble) and weight j+16 (high nibble); value = d · table[index]. Dot products read Q8_0 activations.

/// Bytes per IQ4_NL block.
@inlinable public var iq4_NLBlockBytes: Int { 18 }

/// IQ4_NL weights. llama.cpp's AVX2 build repacks IQ4_NL matrices (iq4_nl_8x8_q8_0, rows a multiple of 8) and
/// multiplies them with the GEMV and GEMM it shares with Q4_0 (gemv/gemm_q4_b32_8x8_q8_0_lut_avx), which round
/// every activation row alike: per block the exact integer sum S, `acc = fma(S, dw·da, acc)`, blocks in order.
public enum IQ4_NLRows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: iq4_NLBlockBytes, activationFormat: .q8_0)
    }

    /// Dequantizes `count` (a multiple of 32) IQ4_NL weights at `row` into `out` (ggml's dequantize_row_iq4_nl).
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        let table = iq4NLValues
        for b in 0..<count / 32 {
            let block = row + b * iq4_NLBlockBytes
            let d = loadHalf(block)
            let q = (block + 2).assumingMemoryBound(to: UInt8.self)
            for j in 0..<16 {
                out[b * 32 + j] = d * Float(table[Int(q[j] & 15)])
                out[b * 32 + j + 16] = d * Float(table[Int(q[j] >> 4)])
            }
        }
    }

    /// Σ row · activations over `count` values (IQ4_NL weights × Q8_0 activations), rounded as the repacked GEMV.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc: Float = 0
        for b in 0..<count / 32 {
            let block = row + b * iq4_NLBlockBytes
            let (le, lo) = iq4Nibbles(block + 2, high: false)
            let (he, ho) = iq4Nibbles(block + 2, high: true)
            let x = UnsafeRawPointer(a.quants + b * 32)
            let sum = (dot16(le, lo, x) &+ dot16(he, ho, x + 16)).wrappedSum()
            acc = acc.addingProduct(Float(sum), loadHalf(block) * a.scales[b])
        }
        return acc
    }
}
