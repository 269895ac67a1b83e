import Foundation

// Attention over a half-precision KV cache, as llama.cpp's CPU flash attention computes it. It has two paths, and
// small models are sensitive enough to their rounding that agreeing with llama.cpp token for token needs both:
//
// - batches of fewer than 64 queries (token-by-token generation, short prompts): the query is rounded to half, and
//   an online softmax walks the positions in order, keeping the weighted sum of values in half precision (rounded
//   after every update);
// - batches of 64 or more (prompt processing, perplexity): keys and values are converted to float; query, scores
//   and the value sum stay in float, worked through in tiles of 64 positions.

/// The batch size from which llama.cpp's CPU flash attention switches to its tiled float path (GGML_FA_TILE_Q).
@inlinable public var halfAccumulationBatchLimit: Int { 64 }

/// The dot product of a half row and a (half-rounded) float query exactly as ggml's AVX2 `ggml_vec_dot_f16` sums
/// it: four 8-lane FMA accumulators over steps of 32, reduced pairwise; a tail of fewer than 32 added in double.
@inline(__always)
@inlinable
func llamaDotHalf(_ k: UnsafePointer<UInt16>, _ q: UnsafePointer<Float>, count: Int) -> Float {
    var lanes = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
    let body = count & ~31
    var i = 0
    while i < body {
        for l in 0..<8 {
            lanes.0[l] = fusedMultiplyAdd(halfToFloatTable[Int(k[i + l])], q[i + l], lanes.0[l])
            lanes.1[l] = fusedMultiplyAdd(halfToFloatTable[Int(k[i + 8 + l])], q[i + 8 + l], lanes.1[l])
            lanes.2[l] = fusedMultiplyAdd(halfToFloatTable[Int(k[i + 16 + l])], q[i + 16 + l], lanes.2[l])
            lanes.3[l] = fusedMultiplyAdd(halfToFloatTable[Int(k[i + 24 + l])], q[i + 24 + l], lanes.3[l])
        }
        i += 32
    }
    let x = (lanes.0 + lanes.2) + (lanes.1 + lanes.3)
    let t0 = x.lowHalf + x.highHalf
    var sum = Double((t0[0] + t0[1]) + (t0[2] + t0[3]))
    while i < count {
        sum += Double(halfToFloatTable[Int(k[i])] * q[i])
        i += 1
    }
    return Float(sum)
}

/// `a · b + acc` per lane with a single rounding (an FMA).
@inline(__always)
@inlinable
func fusedMultiplyAdd(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ acc: SIMD4<Float>) -> SIMD4<Float> {
    acc.addingProduct(a, b)
}

/// Rounds eight floats to the nearest half-precision values (ties to even; 65520 and beyond become infinity), as
/// F16C's float→half→float round trip does (two instructions in the AVX2 and AVX-512 builds).
@inline(__always)
@inlinable
func roundToHalves(_ x: SIMD8<Float>) -> SIMD8<Float> {
    #if arch(x86_64) && canImport(Darwin)
        return SIMD8(lowHalf: roundToHalvesBitwise(x.lowHalf), highHalf: roundToHalvesBitwise(x.highHalf))
    #else
        return SIMD8<Float>(SIMD8<Float16>(x))
    #endif
}

/// `roundToHalves` by bit manipulation, for Apple platforms on x86-64, where Swift has no `Float16`.
@inline(__always)
@inlinable
func roundToHalvesBitwise(_ x: SIMD4<Float>) -> SIMD4<Float> {
    let bits = unsafeBitCast(x, to: SIMD4<UInt32>.self)
    let sign = bits & 0x8000_0000
    let magnitude = bits & 0x7FFF_FFFF
    // Normal halves: keep 10 mantissa bits, rounding to nearest even.
    let normal = (magnitude &+ 0xFFF &+ ((magnitude &>> 13) & 1)) & 0xFFFF_E000
    // Below 2⁻¹⁴: multiples of 2⁻²⁴, rounded by the FPU when 0.5 is added and taken away.
    let tiny = unsafeBitCast(
        (unsafeBitCast(magnitude, to: SIMD4<Float>.self) + 0.5) - 0.5, to: SIMD4<UInt32>.self)
    let signedMagnitude = unsafeBitCast(magnitude, to: SIMD4<Int32>.self)
    let isTiny = unsafeBitCast((signedMagnitude &- 0x3880_0000) &>> 31, to: SIMD4<UInt32>.self)
    let isHuge = unsafeBitCast((0x477F_EFFF &- signedMagnitude) &>> 31, to: SIMD4<UInt32>.self)
    let rounded = (normal & ~isTiny) | (tiny & isTiny)
    return unsafeBitCast(((rounded & ~isHuge) | (0x7F80_0000 & isHuge)) | sign, to: SIMD4<Float>.self)
}

/// `llamaDotHalf` for a count that is a multiple of 32, vectorized: ggml's four accumulators of eight lanes, each
/// step converting eight halves at once.
@inline(__always)
@inlinable
func llamaDotHalfVector(_ k: UnsafePointer<UInt16>, _ q: UnsafePointer<Float>, count: Int) -> Float {
    var lanes = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
    let keys = UnsafeRawPointer(k)
    let query = UnsafeRawPointer(q)
    var i = 0
    while i < count {
        @inline(__always) func step(_ j: Int, _ acc: SIMD8<Float>) -> SIMD8<Float> {
            acc.addingProduct(
                loadHalves8(keys + 2 * (i + 8 * j)),
                query.loadUnaligned(fromByteOffset: 4 * (i + 8 * j), as: SIMD8<Float>.self))
        }
        lanes = (step(0, lanes.0), step(1, lanes.1), step(2, lanes.2), step(3, lanes.3))
        i += 32
    }
    let x = (lanes.0 + lanes.2) + (lanes.1 + lanes.3)
    let t0 = x.lowHalf + x.highHalf
    return (t0[0] + t0[1]) + (t0[2] + t0[3])
}

/// llama.cpp's vector flash-attention path (batches under 64 queries) for one query and one head, reproduced
/// operation by operation: a half-rounded query, scores as `ggml_vec_dot_f16` sums them, an online softmax over the
/// positions in order with the value sum kept in half precision (`VKQ = half(fma(v, w, VKQ))`, rescaled as
/// `half(VKQ · m)` when the maximum grows), divided by the weight sum at the end.
///
/// - Parameters:
///   - query: `dimensions` half-rounded floats in natural order.
///   - keys, values: first cached row of this head; rows are `stride` halves apart.
///   - softCap: with a nonzero cap c, scores become `c · tanh(score · scale / c)` (Gemma 2's logit soft-capping,
///     as ggml applies it: the scale divided by c first).
///   - scratch: at least `dimensions` floats.
///   - out: `dimensions` floats.
@inline(__always)
@inlinable
public func attendHalfCacheVectorPath(
    query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
    count: Int, dimensions: Int, scale: Float, softCap: Float = 0, scratch: UnsafeMutablePointer<Float>,
    out: UnsafeMutablePointer<Float>
) {
    let scale = softCap == 0 ? scale : scale / softCap
    let accumulator = scratch
    for i in 0..<dimensions { accumulator[i] = 0 }
    var sum: Float = 0
    var maxScore = -Float.infinity
    let vectorized = dimensions % 32 == 0
    let acc = UnsafeMutableRawPointer(accumulator)
    for t in 0..<count {
        let score =
            vectorized
            ? llamaDotHalfVector(keys + t * stride, query, count: dimensions)
            : llamaDotHalf(keys + t * stride, query, count: dimensions)
        let s = softCap == 0 ? score * scale : softCap * tanhf(score * scale)
        var ms: Float = 1
        var vs: Float = 1
        if s > maxScore {
            ms = expf(maxScore - s)
            maxScore = s
            if vectorized {
                for g in 0..<dimensions / 8 {
                    let a = acc.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
                    acc.storeBytes(of: roundToHalves(a * ms), toByteOffset: 32 * g, as: SIMD8<Float>.self)
                }
            } else {
                for i in 0..<dimensions { accumulator[i] = roundToHalf(accumulator[i] * ms) }
            }
        } else {
            vs = expf(s - maxScore)
        }
        let v = values + t * stride
        if vectorized {
            let rows = UnsafeRawPointer(v)
            for g in 0..<dimensions / 8 {
                let a = acc.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
                acc.storeBytes(
                    of: roundToHalves(a.addingProduct(loadHalves8(rows + 16 * g), vs)), toByteOffset: 32 * g,
                    as: SIMD8<Float>.self)
            }
        } else {
            for i in 0..<dimensions {
                accumulator[i] = roundToHalf(fusedMultiplyAdd(halfToFloatTable[Int(v[i])], vs, accumulator[i]))
            }
        }
        sum = fusedMultiplyAdd(sum, ms, vs)
    }
    let inverse: Float = sum == 0 ? 0 : 1 / sum
    for i in 0..<dimensions { out[i] = accumulator[i] * inverse }
}

/// Stores `count` floats as halves.
@inline(__always)
@inlinable
public func storeHalves(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { out[i] = floatToHalf(x[i]) }
}

/// The KV tile of llama.cpp's tiled flash-attention path (GGML_FA_TILE_KV).
@inlinable public var attentionTileSize: Int { 64 }

/// The row stride, in positions, of transposed keys for `attendFloatCacheTiled` in a context of `contextLength`
/// positions: whole tiles, so a tile's scores can always read 64 positions.
@inlinable
public func tiledKeyStride(contextLength: Int) -> Int {
    (contextLength + attentionTileSize - 1) / attentionTileSize * attentionTileSize
}

/// 64 floats as eight 8-lane vectors, which the loops below keep in registers: eight independent FMA chains where
/// one would wait on the latency of the last.
@usableFromInline
struct Floats64 {
    @usableFromInline var v0: SIMD8<Float>, v1: SIMD8<Float>, v2: SIMD8<Float>, v3: SIMD8<Float>
    @usableFromInline var v4: SIMD8<Float>, v5: SIMD8<Float>, v6: SIMD8<Float>, v7: SIMD8<Float>

    /// Zeros.
    @inline(__always) @inlinable
    init() {
        (v0, v1, v2, v3, v4, v5, v6, v7) = (.zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero)
    }

    /// The 64 floats at `p`.
    @inline(__always) @inlinable
    init(loading p: UnsafeRawPointer) {
        v0 = p.loadUnaligned(fromByteOffset: 0, as: SIMD8<Float>.self)
        v1 = p.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
        v2 = p.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
        v3 = p.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
        v4 = p.loadUnaligned(fromByteOffset: 128, as: SIMD8<Float>.self)
        v5 = p.loadUnaligned(fromByteOffset: 160, as: SIMD8<Float>.self)
        v6 = p.loadUnaligned(fromByteOffset: 192, as: SIMD8<Float>.self)
        v7 = p.loadUnaligned(fromByteOffset: 224, as: SIMD8<Float>.self)
    }

    /// `self[i] = fma(p[i], s, self[i])` for the 64 floats at `p`.
    @inline(__always) @inlinable
    mutating func addProducts(_ p: UnsafeRawPointer, _ s: Float) {
        let x = Floats64(loading: p)
        v0 = fusedMultiplyAdd(x.v0, s, v0)
        v1 = fusedMultiplyAdd(x.v1, s, v1)
        v2 = fusedMultiplyAdd(x.v2, s, v2)
        v3 = fusedMultiplyAdd(x.v3, s, v3)
        v4 = fusedMultiplyAdd(x.v4, s, v4)
        v5 = fusedMultiplyAdd(x.v5, s, v5)
        v6 = fusedMultiplyAdd(x.v6, s, v6)
        v7 = fusedMultiplyAdd(x.v7, s, v7)
    }

    /// Stores the 64 floats, each times `scale`, at `p`.
    @inline(__always) @inlinable
    func store(to p: UnsafeMutableRawPointer, times scale: Float = 1) {
        p.storeBytes(of: v0 * scale, toByteOffset: 0, as: SIMD8<Float>.self)
        p.storeBytes(of: v1 * scale, toByteOffset: 32, as: SIMD8<Float>.self)
        p.storeBytes(of: v2 * scale, toByteOffset: 64, as: SIMD8<Float>.self)
        p.storeBytes(of: v3 * scale, toByteOffset: 96, as: SIMD8<Float>.self)
        p.storeBytes(of: v4 * scale, toByteOffset: 128, as: SIMD8<Float>.self)
        p.storeBytes(of: v5 * scale, toByteOffset: 160, as: SIMD8<Float>.self)
        p.storeBytes(of: v6 * scale, toByteOffset: 192, as: SIMD8<Float>.self)
        p.storeBytes(of: v7 * scale, toByteOffset: 224, as: SIMD8<Float>.self)
    }
}

/// Scores of the 64 positions of a tile (`column`: the tile's first position in dimension 0 of the transposed
/// keys) into `weights`: each lane a sequential FMA chain over the dimensions, as simd_gemm's, then scaled.
@inline(__always)
@inlinable
func tileScores(
    query: UnsafePointer<Float>, column: UnsafeRawPointer, keyStride: Int, dimensions: Int, scale: Float,
    into weights: UnsafeMutablePointer<Float>
) {
    var s = Floats64()
    for d in 0..<dimensions { s.addProducts(column + 4 * d * keyStride, query[d]) }
    s.store(to: weights, times: scale)
}

/// `out[g] = fma(v_k[g], weights[k], out[g])` for the `n` value rows `v_k` (`values`, `valueStride` floats apart)
/// in order, over `groups` groups of eight dimensions: 64 dimensions at a time held in registers, then one group
/// at a time.
@inline(__always)
@inlinable
func accumulateValues(
    _ values: UnsafePointer<Float>, valueStride: Int, weights: UnsafePointer<Float>, n: Int, groups: Int,
    into out: UnsafeMutableRawPointer
) {
    var g = 0
    while g + 8 <= groups {
        var o = Floats64(loading: out + 32 * g)
        for k in 0..<n { o.addProducts(UnsafeRawPointer(values + k * valueStride) + 32 * g, weights[k]) }
        o.store(to: out + 32 * g)
        g += 8
    }
    while g < groups {
        var a = out.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
        for k in 0..<n {
            a = fusedMultiplyAdd(
                UnsafeRawPointer(values + k * valueStride).loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self),
                weights[k], a)
        }
        out.storeBytes(of: a, toByteOffset: 32 * g, as: SIMD8<Float>.self)
        g += 1
    }
}

/// `acc = fma(a, b, acc)` on eight lanes.
@inline(__always)
@inlinable
func fusedMultiplyAdd(_ a: SIMD8<Float>, _ b: Float, _ acc: SIMD8<Float>) -> SIMD8<Float> {
    acc.addingProduct(a, b)
}

/// One head's attention output for one query as llama.cpp's tiled flash-attention path (batches of 64 queries or
/// more) computes it, over keys and values converted to float:
///
/// - per tile of 64 positions, scores are sequential FMA chains over the head dimensions (simd_gemm), scaled;
/// - the running maximum grows tile by tile (the sum and the output are rescaled by `expf(old − new)`), the
///   weights are ggml_v_expf(score − max) summed eight at a time into a double, and the output accumulates
///   `fma(v, weight, out)` position by position;
/// - the output is divided by the weight sum at the end.
///
/// - Parameters:
///   - query: `dimensions` floats (a multiple of 8), natural order, not rounded.
///   - keysTransposed: this head's keys as `dimensions` rows of `keyStride` positions (dimension-major).
///     Rows are read a whole tile at a time: `keyStride` is at least `tiledKeyStride(contextLength: count)`, and
///     the positions past `count` may hold anything (their scores are masked).
///   - values: this head's first value row; rows are `valueStride` floats apart.
///   - first: the first position attended (a sliding window); the tiles stay aligned to position 0, as
///     llama.cpp's mask leaves them, and the positions before `first` are masked.
///   - softCap: as in `attendHalfCacheVectorPath` (ggml: the tile's scores through tanh, then times the cap).
///   - weights: scratch of `attentionTileSize` floats.
///   - out: `dimensions` floats.
@inline(__always)
@inlinable
public func attendFloatCacheTiled(
    query: UnsafePointer<Float>, keysTransposed: UnsafePointer<Float>, keyStride: Int, values: UnsafePointer<Float>,
    valueStride: Int, from first: Int = 0, count: Int, dimensions: Int, scale: Float, softCap: Float = 0,
    weights: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
) {
    let o = UnsafeMutableRawPointer(out)
    let groups = dimensions / 8
    for g in 0..<groups { o.storeBytes(of: SIMD8<Float>(), toByteOffset: 32 * g, as: SIMD8<Float>.self) }
    let scale = softCap == 0 ? scale : scale / softCap
    var maxScore = -Float.infinity
    var sum: Float = 0
    var tileStart = first / attentionTileSize * attentionTileSize
    while tileStart < count {
        let n = min(attentionTileSize, count - tileStart)
        // Scores of the whole tile (positions past `n` are computed and then masked).
        tileScores(
            query: query, column: UnsafeRawPointer(keysTransposed + tileStart), keyStride: keyStride,
            dimensions: dimensions, scale: scale, into: weights)
        if softCap != 0 {
            for i in 0..<attentionTileSize { weights[i] = softCap * tanhf(weights[i]) }
        }
        for i in n..<attentionTileSize { weights[i] = -.infinity }
        for i in 0..<max(0, first - tileStart) { weights[i] = -.infinity }
        var tileMax = -Float.infinity
        for i in 0..<n { tileMax = max(tileMax, weights[i]) }
        let newMax = max(maxScore, tileMax)
        if newMax > maxScore {
            let ms = expf(maxScore - newMax)
            for g in 0..<groups {
                o.storeBytes(
                    of: o.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self) * ms, toByteOffset: 32 * g,
                    as: SIMD8<Float>.self)
            }
            sum *= ms
        }
        maxScore = newMax
        // ggml_vec_soft_max_f32: eight weights at a time, each group summed as hsum_float_8, the groups in double.
        var total: Double = 0
        for chunk in 0..<(attentionTileSize / 8) {
            let raw = UnsafeMutableRawPointer(weights + 8 * chunk)
            let v = raw.loadUnaligned(as: SIMD8<Float>.self)
            // Masked positions (−∞) weigh 0; the others ggml_v_expf(score − max).
            let masked = v .== -.infinity
            let w = llamaExp((v - maxScore).replacing(with: 0, where: masked)).replacing(with: 0, where: masked)
            raw.storeBytes(of: w, as: SIMD8<Float>.self)
            let r = w.highHalf + w.lowHalf
            total += Double((r[0] + r[2]) + (r[1] + r[3]))
        }
        sum = Float(Double(sum) + total)
        accumulateValues(
            values + tileStart * valueStride, valueStride: valueStride, weights: weights, n: n, groups: groups, into: o)
        tileStart += attentionTileSize
    }
    let inverse: Float = sum == 0 ? 0 : 1 / sum
    for g in 0..<groups {
        o.storeBytes(
            of: o.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self) * inverse, toByteOffset: 32 * g,
            as: SIMD8<Float>.self)
    }
}

/// Converts `count` halves to floats (eight at a time, then one by one).
@inline(__always)
@inlinable
public func halvesToFloats(_ h: UnsafePointer<UInt16>, _ out: UnsafeMutablePointer<Float>, count: Int) {
    var i = 0
    let src = UnsafeRawPointer(h)
    while i + 8 <= count {
        UnsafeMutableRawPointer(out + i).storeBytes(of: loadHalves8(src + 2 * i), as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        out[i] = convertHalf(src, 2 * i)
        i += 1
    }
}
