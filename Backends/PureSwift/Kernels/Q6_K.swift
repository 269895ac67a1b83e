// Q6_K: super-blocks of 256 weights, 210 bytes: 128 bytes of low nibbles (ql), 64 bytes of 2-bit high parts (qh),
// 16 int8 scales, half d. In each half n (128 weights; ql + 64n, qh + 32n, scales + 8n), for l in 0..<32:
//   weight l      = (ql[l] & 15)    | ((qh[l] >> 0) & 3) << 4,  scale l/16 + 0
//   weight l + 32 = (ql[l+32] & 15) | ((qh[l] >> 2) & 3) << 4,  scale l/16 + 2
//   weight l + 64 = (ql[l] >> 4)    | ((qh[l] >> 4) & 3) << 4,  scale l/16 + 4
//   weight l + 96 = (ql[l+32] >> 4) | ((qh[l] >> 6) & 3) << 4,  scale l/16 + 6
// value = d · scale · (q − 32). Dot products read Q8_K activations.

/// Bytes per Q6_K super-block.
@inlinable public var q6_KBlockBytes: Int { 210 }

/// Σ over 16 weights (16 bytes of unsigned 6-bit values, even/odd in 16-bit lanes) × 16 int8 activations: lane j
/// sums elements 4j…4j+3.
@inline(__always)
@inlinable
func dot16Q6(_ w: SIMD8<Int16>, _ a: UnsafeRawPointer) -> SIMD4<Int32> {
    let x = a.loadUnaligned(as: SIMD8<Int16>.self)
    return multiplyAddPairs(w & 0xFF, evenBytes(x)) &+ multiplyAddPairs(w &>> 8, oddBytes(x))
}

/// The eight integer lanes of super-block `b` of a Q6_K row with Q8_K activations, as llama.cpp's AVX2
/// ggml_vec_dot_q6_K_q8_K forms them: lane l holds Σ scale · q · a over elements 4l…4l+3 (l < 4) or 4l−16…4l−13
/// (l ≥ 4) of every 32-value chunk, q the unsigned 6-bit value, minus 32 · (scale₂ₗ · Σa over sub-block 2l +
/// scale₂ₗ₊₁ · Σa over sub-block 2l+1). Their sum is the exact Σ scale · (q − 32) · a of the super-block.
@inline(__always)
@inlinable
func superBlockLanesQ6_K(_ block: UnsafeRawPointer, _ a: ActivationRow, _ b: Int) -> SIMD8<Int32> {
    let low4 = SIMD8<Int16>(repeating: 0x0F0F)
    let two = SIMD8<Int16>(repeating: 0x0303)
    let scales = (block + 192).assumingMemoryBound(to: Int8.self)
    var low = SIMD4<Int32>()  // lanes 0…3: the first 16 values of each chunk
    var high = SIMD4<Int32>()  // lanes 4…7: the last 16
    for n in 0..<2 {
        let ql = block + 64 * n
        let qh = block + 128 + 32 * n
        let sc = scales + 8 * n
        let x = UnsafeRawPointer(a.quants + b * 256 + 128 * n)
        for half in 0..<2 {  // l in 16·half ..< 16·half + 16
            let o = 16 * half
            let l0 = ql.loadUnaligned(fromByteOffset: o, as: SIMD8<Int16>.self)
            let l32 = ql.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Int16>.self)
            let h = qh.loadUnaligned(fromByteOffset: o, as: SIMD8<Int16>.self)
            let w1 = (l0 & low4) | ((h & two) &<< 4)
            let w2 = (l32 & low4) | (((h &>> 2) & two) &<< 4)
            let w3 = ((l0 &>> 4) & low4) | (((h &>> 4) & two) &<< 4)
            let w4 = ((l32 &>> 4) & low4) | (((h &>> 6) & two) &<< 4)
            let s =
                dot16Q6(w1, x + o) &* Int32(sc[half]) &+ dot16Q6(w2, x + o + 32) &* Int32(sc[half + 2])
                &+ dot16Q6(w3, x + o + 64) &* Int32(sc[half + 4]) &+ dot16Q6(w4, x + o + 96) &* Int32(sc[half + 6])
            if half == 0 { low &+= s } else { high &+= s }
        }
    }
    var lanes = SIMD8(lowHalf: low, highHalf: high)
    let bs = a.blockSums + b * 16
    for l in 0..<8 {
        lanes[l] &-= 32 &* (bs[2 * l] &* Int32(scales[2 * l]) &+ bs[2 * l + 1] &* Int32(scales[2 * l + 1]))
    }
    return lanes
}

/// `Q6_KRows.dot` as llama.cpp's tiled K-quant product (ggml-cpu/tiled, AVX2 microtile) rounds it, which the reference
/// build takes for Q6_K matrices times batches of at least `q6_KTiledMinimumBatch` rows: per super-block the exact
/// integer sum S, `acc = fma(dw · Float(S), da, acc)`.
@inline(__always)
@inlinable
public func dotQ6_KTiled(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
    var acc: Float = 0
    for b in 0..<count / 256 {
        let block = row + b * q6_KBlockBytes
        let sum = superBlockLanesQ6_K(block, a, b).wrappedSum()
        acc = acc.addingProduct(loadHalf(block, 208) * Float(sum), a.scales[b])
    }
    return acc
}

/// The smallest batch for which llama.cpp's CPU backend multiplies K-quant matrices (not repacked) with its tiled
/// kernel (`ggml_tiled_min_batch`).
@inlinable public var q6_KTiledMinimumBatch: Int { 8 }

/// Q6_K weights: batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled kernel does.
public enum Q6_KRows: TiledKQuant {
    public typealias Batched = Q6_KTiledRows

    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 256, blockBytes: q6_KBlockBytes, activationFormat: .q8_K)
    }

    /// Dequantizes `count` (a multiple of 256) Q6_K weights at `row` into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for b in 0..<count / 256 {
            let block = row + b * q6_KBlockBytes
            let d = loadHalf(block, 208)
            for n in 0..<2 {
                let ql = (block + 64 * n).assumingMemoryBound(to: UInt8.self)
                let qh = (block + 128 + 32 * n).assumingMemoryBound(to: UInt8.self)
                let sc = (block + 192 + 8 * n).assumingMemoryBound(to: Int8.self)
                let y = out + b * 256 + 128 * n
                for l in 0..<32 {
                    let s = l / 16
                    let q1 = Int32((ql[l] & 0x0F) | ((qh[l] >> 0) & 3) << 4) - 32
                    let q2 = Int32((ql[l + 32] & 0x0F) | ((qh[l] >> 2) & 3) << 4) - 32
                    let q3 = Int32((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32
                    let q4 = Int32((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32
                    y[l] = d * Float(sc[s]) * Float(q1)
                    y[l + 32] = d * Float(sc[s + 2]) * Float(q2)
                    y[l + 64] = d * Float(sc[s + 4]) * Float(q3)
                    y[l + 96] = d * Float(sc[s + 6]) * Float(q4)
                }
            }
        }
    }

    /// Σ row · activations over `count` values (Q6_K weights × Q8_K activations), rounded as llama.cpp's AVX2
    /// ggml_vec_dot_q6_K_q8_K rounds: `acc = fma(da·dw, lane, acc)` per lane of `superBlockLanesQ6_K`, then
    /// hsum_float_8.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        for b in 0..<count / 256 {
            let block = row + b * q6_KBlockBytes
            let lanes = superBlockLanesQ6_K(block, a, b)
            acc = acc.addingProduct(SIMD8(repeating: a.scales[b] * loadHalf(block, 208)), intToFloat(lanes))
        }
        return llamaHorizontalSum(acc)
    }
}

/// `dotQ6_KTiled` as a row kernel.
public enum Q6_KTiledRows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ6_KTiled(row, a, count: count)
    }
}
