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

/// One position's step of llama.cpp's online softmax (its vector path): the score scaled, or soft-capped
/// (`softCap · tanh(score · scale)`, the scale already divided by the cap); on a new maximum the factor `ms` the
/// running sums are rescaled by (`grew`; the weight `vs` is then 1), else the weight `vs = exp(s − max)`.
@inline(__always)
@inlinable
func onlineSoftmaxStep(_ score: Float, scale: Float, softCap: Float, maxScore: inout Float) -> (
    ms: Float, vs: Float, grew: Bool
) {
    let s = softCap == 0 ? score * scale : softCap * tanhf(score * scale)
    guard s > maxScore else { return (1, expf(s - maxScore), false) }
    let ms = expf(maxScore - s)
    maxScore = s
    return (ms, 1, true)
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
///   - scratch: `vectorPathHeadsScratch(heads: 1, dimensions:)` floats (`dimensions` where that is not a multiple of
///     32, which takes a scalar loop).
///   - out: `dimensions` floats.
@inline(__always)
@inlinable
public func attendHalfCacheVectorPath(
    query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
    count: Int, dimensions: Int, scale: Float, softCap: Float = 0, scratch: UnsafeMutablePointer<Float>,
    out: UnsafeMutablePointer<Float>
) {
    if dimensions % 32 == 0 {
        attendHalfCacheVectorPathHeads(
            queries: query, heads: 1, keys: keys, values: values, stride: stride, count: count,
            dimensions: dimensions, scale: scale, softCap: softCap, scratch: scratch, out: out)
    } else {
        attendHalfCacheVectorPathScalar(
            query: query, keys: keys, values: values, stride: stride, count: count, dimensions: dimensions,
            scale: scale, softCap: softCap, scratch: scratch, out: out)
    }
}

/// `attendHalfCacheVectorPath` position by position, one value at a time: what it computes for any `dimensions`,
/// and the reference its vector form (`attendHalfCacheVectorPathHeads`) is tested against. `scratch`: `dimensions`
/// floats.
@inlinable
public func attendHalfCacheVectorPathScalar(
    query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
    count: Int, dimensions: Int, scale: Float, softCap: Float = 0, scratch: UnsafeMutablePointer<Float>,
    out: UnsafeMutablePointer<Float>
) {
    let scale = softCap == 0 ? scale : scale / softCap
    let accumulator = scratch
    for i in 0..<dimensions { accumulator[i] = 0 }
    var sum: Float = 0
    var maxScore = -Float.infinity
    for t in 0..<count {
        let score = llamaDotHalf(keys + t * stride, query, count: dimensions)
        let (ms, vs, grew) = onlineSoftmaxStep(score, scale: scale, softCap: softCap, maxScore: &maxScore)
        if grew {
            for i in 0..<dimensions { accumulator[i] = roundToHalf(accumulator[i] * ms) }
        }
        let v = values + t * stride
        for i in 0..<dimensions {
            accumulator[i] = roundToHalf(fusedMultiplyAdd(halfToFloatTable[Int(v[i])], vs, accumulator[i]))
        }
        sum = fusedMultiplyAdd(sum, ms, vs)
    }
    let inverse: Float = sum == 0 ? 0 : 1 / sum
    for i in 0..<dimensions { out[i] = accumulator[i] * inverse }
}

/// Positions the vector path takes at a time (`attendHalfCacheVectorPathHeads`): their scores, then their softmax
/// weights, then their values.
@inlinable public var vectorPathBlock: Int { 32 }

/// The scratch `attendHalfCacheVectorPathHeads` needs for `kvHeads` KV heads of `heads` query heads each, of
/// `dimensions` values, in floats: the `VectorPathPartials` of every query head, then one block's softmax factors
/// and weights.
@inlinable
public func vectorPathHeadsScratch(heads: Int, kvHeads: Int = 1, dimensions: Int) -> Int {
    heads * kvHeads * (dimensions + 2) + 2 * heads * vectorPathBlock
}

/// Where a vector-path pass over some positions leaves each query head's state: the value sum (half-rounded, not yet
/// divided), the weight sum and the largest score, at the front of its scratch. llama.cpp's split decode path
/// (`ggml_flash_attn_ext_reduce_partials`) combines such partials of consecutive position ranges.
public struct VectorPathPartials {
    /// The scratch the pass used.
    public let base: UnsafeMutablePointer<Float>
    /// Query heads (all KV heads' together).
    public let rows: Int
    public let dimensions: Int

    @inlinable
    public init(_ base: UnsafeMutablePointer<Float>, rows: Int, dimensions: Int) {
        (self.base, self.rows, self.dimensions) = (base, rows, dimensions)
    }

    /// Row `r`'s value sums.
    @inlinable public func values(_ r: Int) -> UnsafeMutablePointer<Float> { base + r * dimensions }
    /// The weight sums (`S`), row r's at index r.
    @inlinable public var sums: UnsafeMutablePointer<Float> { base + rows * dimensions }
    /// The largest scores (`M`; −∞ where no position was seen), row r's at index r.
    @inlinable public var maxScores: UnsafeMutablePointer<Float> { sums + rows }
}

/// `attendHalfCacheVectorPath` for the `heads` query heads of each of `kvHeads` KV heads, in one pass over the
/// positions: each key and value row (every KV head's part of it, in memory order) read once for all of them. The
/// positions go in blocks of `vectorPathBlock`, each, KV head by KV head, in three passes, which do each head's
/// arithmetic in `attendHalfCacheVectorPath`'s order, operation for operation, so its output is the same bit for
/// bit:
///
/// 1. the scores of every position and head (no score depends on the softmax);
/// 2. the online softmax, position by position: the rescaling factor `ms` (1 unless the maximum grew) and the weight
///    `vs`, and the weight sum;
/// 3. the value sums of all the heads (`accumulateHalfValues`): rescaled where `ms` ≠ 1 (when the maximum grew; a
///    factor of exactly 1 would leave the half-rounded sums as they are), then the weighted value added, rounded to
///    half after each.
///
/// Pass 2's calls into libm's `expf` thus come between vector loops, not inside one, which would have to keep every
/// vector in memory across each call.
///
/// - Parameters:
///   - queries: `kvHeads · heads` half-rounded rows of `dimensions` floats (a multiple of 32), one after another;
///     KV head g's query heads are rows `g · heads ..< (g + 1) · heads`.
///   - keys, values: KV head 0's part of the first cached row; KV head g's starts `g · dimensions` halves later, and
///     rows are `stride` halves apart.
///   - count, scale, softCap: as in `attendHalfCacheVectorPath`.
///   - scratch: `vectorPathHeadsScratch(heads:kvHeads:dimensions:)` floats.
///   - out: `kvHeads · heads` rows of `dimensions` floats, one after another; or nil, to leave every row's
///     `VectorPathPartials` in `scratch` instead.
@inline(__always)
@inlinable
public func attendHalfCacheVectorPathHeads(
    queries: UnsafePointer<Float>, heads: Int, kvHeads: Int = 1, keys: UnsafePointer<UInt16>,
    values: UnsafePointer<UInt16>, stride: Int, count: Int, dimensions: Int, scale: Float, softCap: Float = 0,
    scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>?
) {
    let scale = softCap == 0 ? scale : scale / softCap
    let block = vectorPathBlock
    let rows = heads * kvHeads
    let partials = VectorPathPartials(scratch, rows: rows, dimensions: dimensions)
    let sums = partials.sums
    let maxScores = partials.maxScores
    let factors = maxScores + rows  // heads × block: ms
    let weights = factors + heads * block  // heads × block: scores, then vs
    for i in 0..<rows * dimensions { scratch[i] = 0 }
    for j in 0..<rows { (sums[j], maxScores[j]) = (0, -.infinity) }
    var first = 0
    while first < count {
        let n = min(block, count - first)
        for g in 0..<kvHeads {
            let row0 = g * heads
            let queries = queries + row0 * dimensions
            for t in 0..<n {
                let key = keys + (first + t) * stride + g * dimensions
                for j in 0..<heads {
                    weights[j * block + t] = llamaDotHalfVector(key, queries + j * dimensions, count: dimensions)
                }
            }
            for j in 0..<heads {
                var maxScore = maxScores[row0 + j]
                var sum = sums[row0 + j]
                for t in 0..<n {
                    let (ms, vs, _) = onlineSoftmaxStep(
                        weights[j * block + t], scale: scale, softCap: softCap, maxScore: &maxScore)
                    (factors[j * block + t], weights[j * block + t]) = (ms, vs)
                    sum = fusedMultiplyAdd(sum, ms, vs)
                }
                (maxScores[row0 + j], sums[row0 + j]) = (maxScore, sum)
            }
            accumulateHalfValues(
                UnsafeRawPointer(values + first * stride + g * dimensions), rowBytes: 2 * stride, factors: factors,
                weights: weights, heads: heads, block: block, n: n, dimensions: dimensions,
                into: UnsafeMutableRawPointer(partials.values(row0)))
        }
        first += n
    }
    guard let out else { return }
    for j in 0..<rows {
        let inverse: Float = sums[j] == 0 ? 0 : 1 / sums[j]
        let v = partials.values(j)
        for i in 0..<dimensions { out[j * dimensions + i] = v[i] * inverse }
    }
}

/// llama.cpp's split decode path's last step (`ggml_flash_attn_ext_reduce_partials`): the `VectorPathPartials` of
/// consecutive position ranges (`chunks`, in position order), combined row by row in that order as
/// `M = max(M, M_c)`, `VKQ = fma(VKQ, e^(M_old − M), VKQ_c · e^(M_c − M))` and the same for `S` (a range with
/// `S_c = 0` saw no position and is skipped), then divided by `S`: `rows` rows of `dimensions` floats into `out`.
@inlinable
public func reduceVectorPathPartials(
    _ chunks: [VectorPathPartials], rows: Int, dimensions: Int, out: UnsafeMutablePointer<Float>
) {
    for r in 0..<rows {
        let o = out + r * dimensions
        for i in 0..<dimensions { o[i] = 0 }
        var maxScore = -Float.infinity
        var sum: Float = 0
        for c in chunks where c.sums[r] != 0 {
            let newMax = Swift.max(maxScore, c.maxScores[r])
            let oldScale = expf(maxScore - newMax)
            let newScale = expf(c.maxScores[r] - newMax)
            let v = c.values(r)
            for i in 0..<dimensions { o[i] = fusedMultiplyAdd(o[i], oldScale, v[i] * newScale) }
            sum = fusedMultiplyAdd(sum, oldScale, c.sums[r] * newScale)
            maxScore = newMax
        }
        if sum != 0 {
            let inverse = 1 / sum
            for i in 0..<dimensions { o[i] *= inverse }
        }
    }
}

/// The half-precision value sums of the vector path over `n` positions, for `heads` query heads at once: for each
/// position k in order and each head j, head j's sums (`dimensions` floats at `out + 4 · j · dimensions` bytes)
/// rescaled as `half(sums · factors[j · block + k])` where that factor is not 1, then
/// `sums = half(fma(v_k, weights[j · block + k], sums))`, `v_k` the `dimensions` halves (a multiple of 8) at
/// `values + k · rowBytes`. The sums stay in memory (the level-1 cache): the heads' and groups' updates between two
/// of the same eight sums hide each one's latency, where sums held in registers across the positions would wait on
/// it (measured: a third faster for three heads of 64, two fifths for four of 256).
@inline(__always)
@inlinable
func accumulateHalfValues(
    _ values: UnsafeRawPointer, rowBytes: Int, factors: UnsafePointer<Float>, weights: UnsafePointer<Float>,
    heads: Int, block: Int, n: Int, dimensions: Int, into out: UnsafeMutableRawPointer
) {
    let groups = dimensions / 8
    for k in 0..<n {
        let row = values + k * rowBytes
        for j in 0..<heads {
            let sums = out + 4 * j * dimensions
            let factor = factors[j * block + k]
            if factor != 1 {
                for g in 0..<groups {
                    let v = sums.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
                    sums.storeBytes(of: roundToHalves(v * factor), toByteOffset: 32 * g, as: SIMD8<Float>.self)
                }
            }
            let weight = weights[j * block + k]
            for g in 0..<groups {
                let v = sums.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
                sums.storeBytes(
                    of: roundToHalves(v.addingProduct(loadHalves8(row + 16 * g), weight)), toByteOffset: 32 * g,
                    as: SIMD8<Float>.self)
            }
        }
    }
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

/// 64 floats as eight 8-lane vectors (two `Floats32`), which the loops below keep in registers: eight independent
/// FMA chains where one would wait on the latency of the last.
@usableFromInline
struct Floats64 {
    @usableFromInline var low: Floats32, high: Floats32

    /// Zeros.
    @inline(__always) @inlinable
    init() { (low, high) = (Floats32(), Floats32()) }

    /// The 64 floats at `p`.
    @inline(__always) @inlinable
    init(loading p: UnsafeRawPointer) { (low, high) = (Floats32(loading: p), Floats32(loading: p + 128)) }

    /// `self[i] = fma(p[i], s, self[i])` for the 64 floats at `p`.
    @inline(__always) @inlinable
    mutating func addProducts(_ p: UnsafeRawPointer, _ s: Float) {
        let x = Floats64(loading: p)
        low.addProducts(x.low, s)
        high.addProducts(x.high, s)
    }

    /// Stores the 64 floats, each times `scale`, at `p`.
    @inline(__always) @inlinable
    func store(to p: UnsafeMutableRawPointer, times scale: Float = 1) {
        low.store(to: p, times: scale)
        high.store(to: p + 128, times: scale)
    }
}

/// Scores of the 64 positions of a tile (`column`: the tile's first position in dimension 0 of the transposed
/// keys) into `weights`: each lane a sequential FMA chain over the dimensions, as simd_gemm's, then scaled.
@inline(__always)
@inlinable
func tileScores<Build>(
    query: UnsafePointer<Float>, column: UnsafeRawPointer, keyStride: Int, dimensions: Int, scale: Float,
    into weights: UnsafeMutablePointer<Float>, build: Build.Type
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
func accumulateValues<Build>(
    _ values: UnsafePointer<Float>, valueStride: Int, weights: UnsafePointer<Float>, n: Int, groups: Int,
    into out: UnsafeMutableRawPointer, build: Build.Type
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

/// 32 floats as four 8-lane vectors: half a `Floats64`, and what two queries at once keep in registers (two sets
/// of accumulators and one of loaded keys or values fit the 16 registers of AVX2).
@usableFromInline
struct Floats32 {
    @usableFromInline var v0: SIMD8<Float>, v1: SIMD8<Float>, v2: SIMD8<Float>, v3: SIMD8<Float>

    /// Zeros.
    @inline(__always) @inlinable
    init() { (v0, v1, v2, v3) = (.zero, .zero, .zero, .zero) }

    /// The 32 floats at `p`.
    @inline(__always) @inlinable
    init(loading p: UnsafeRawPointer) {
        v0 = p.loadUnaligned(fromByteOffset: 0, as: SIMD8<Float>.self)
        v1 = p.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
        v2 = p.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
        v3 = p.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
    }

    /// `self[i] = fma(x[i], s, self[i])`.
    @inline(__always) @inlinable
    mutating func addProducts(_ x: Floats32, _ s: Float) {
        v0 = fusedMultiplyAdd(x.v0, s, v0)
        v1 = fusedMultiplyAdd(x.v1, s, v1)
        v2 = fusedMultiplyAdd(x.v2, s, v2)
        v3 = fusedMultiplyAdd(x.v3, s, v3)
    }

    /// Stores the 32 floats, each times `scale`, at `p`.
    @inline(__always) @inlinable
    func store(to p: UnsafeMutableRawPointer, times scale: Float = 1) {
        p.storeBytes(of: v0 * scale, toByteOffset: 0, as: SIMD8<Float>.self)
        p.storeBytes(of: v1 * scale, toByteOffset: 32, as: SIMD8<Float>.self)
        p.storeBytes(of: v2 * scale, toByteOffset: 64, as: SIMD8<Float>.self)
        p.storeBytes(of: v3 * scale, toByteOffset: 96, as: SIMD8<Float>.self)
    }
}

/// `tileScores` of two queries over the same tile, into `w0` and `w1`: each key vector loaded once for both; every
/// score is the same chain over the dimensions as `tileScores` forms it.
@inline(__always)
@inlinable
func tileScoresPair<Build>(
    _ q0: UnsafePointer<Float>, _ q1: UnsafePointer<Float>, column: UnsafeRawPointer, keyStride: Int,
    dimensions: Int, scale: Float, into w0: UnsafeMutablePointer<Float>, _ w1: UnsafeMutablePointer<Float>,
    build: Build.Type
) {
    for half in 0..<2 {
        var s0 = Floats32()
        var s1 = Floats32()
        for d in 0..<dimensions {
            let k = Floats32(loading: column + 4 * (d * keyStride + 32 * half))
            s0.addProducts(k, q0[d])
            s1.addProducts(k, q1[d])
        }
        s0.store(to: w0 + 32 * half, times: scale)
        s1.store(to: w1 + 32 * half, times: scale)
    }
}

/// `accumulateValues` of two queries (weights `w0`, `w1`; outputs `out0`, `out1`) over the same value rows, each
/// value vector loaded once for both: 32 dimensions at a time, then one group of eight at a time.
@inline(__always)
@inlinable
func accumulateValuesPair<Build>(
    _ values: UnsafePointer<Float>, valueStride: Int, _ w0: UnsafePointer<Float>, _ w1: UnsafePointer<Float>, n: Int,
    groups: Int, into out0: UnsafeMutableRawPointer, _ out1: UnsafeMutableRawPointer, build: Build.Type
) {
    var g = 0
    while g + 4 <= groups {
        var a0 = Floats32(loading: out0 + 32 * g)
        var a1 = Floats32(loading: out1 + 32 * g)
        for k in 0..<n {
            let v = Floats32(loading: UnsafeRawPointer(values + k * valueStride) + 32 * g)
            a0.addProducts(v, w0[k])
            a1.addProducts(v, w1[k])
        }
        a0.store(to: out0 + 32 * g)
        a1.store(to: out1 + 32 * g)
        g += 4
    }
    if g < groups {
        accumulateValues(
            values + 8 * g, valueStride: valueStride, weights: w0, n: n, groups: groups - g, into: out0 + 32 * g,
            build: build)
        accumulateValues(
            values + 8 * g, valueStride: valueStride, weights: w1, n: n, groups: groups - g, into: out1 + 32 * g,
            build: build)
    }
}

/// `tileScores` of four queries over the same tile (the AVX-512 builds, whose 32 registers hold the four queries'
/// sixteen accumulators and the loaded keys): each key vector loaded once for all four; every score is the same chain
/// over the dimensions as `tileScores` forms it.
@inline(__always)
@inlinable
func tileScoresQuad<Build>(
    _ q: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
    column: UnsafeRawPointer, keyStride: Int, dimensions: Int, scale: Float,
    into w: (
        UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>,
        UnsafeMutablePointer<Float>
    ),
    build: Build.Type
) {
    for half in 0..<2 {
        var s0 = Floats32()
        var s1 = Floats32()
        var s2 = Floats32()
        var s3 = Floats32()
        for d in 0..<dimensions {
            let k = Floats32(loading: column + 4 * (d * keyStride + 32 * half))
            s0.addProducts(k, q.0[d])
            s1.addProducts(k, q.1[d])
            s2.addProducts(k, q.2[d])
            s3.addProducts(k, q.3[d])
        }
        s0.store(to: w.0 + 32 * half, times: scale)
        s1.store(to: w.1 + 32 * half, times: scale)
        s2.store(to: w.2 + 32 * half, times: scale)
        s3.store(to: w.3 + 32 * half, times: scale)
    }
}

/// `accumulateValues` of four queries over the same `n` value rows (the AVX-512 builds), each value vector loaded
/// once for all four: 32 dimensions at a time, then what is left through `accumulateValuesPair`.
@inline(__always)
@inlinable
func accumulateValuesQuad<Build>(
    _ values: UnsafePointer<Float>, valueStride: Int,
    _ w: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>), n: Int,
    groups: Int,
    into out: (UnsafeMutableRawPointer, UnsafeMutableRawPointer, UnsafeMutableRawPointer, UnsafeMutableRawPointer),
    build: Build.Type
) {
    var g = 0
    while g + 4 <= groups {
        var a0 = Floats32(loading: out.0 + 32 * g)
        var a1 = Floats32(loading: out.1 + 32 * g)
        var a2 = Floats32(loading: out.2 + 32 * g)
        var a3 = Floats32(loading: out.3 + 32 * g)
        for k in 0..<n {
            let v = Floats32(loading: UnsafeRawPointer(values + k * valueStride) + 32 * g)
            a0.addProducts(v, w.0[k])
            a1.addProducts(v, w.1[k])
            a2.addProducts(v, w.2[k])
            a3.addProducts(v, w.3[k])
        }
        a0.store(to: out.0 + 32 * g)
        a1.store(to: out.1 + 32 * g)
        a2.store(to: out.2 + 32 * g)
        a3.store(to: out.3 + 32 * g)
        g += 4
    }
    if g < groups {
        let rest = values + 8 * g
        accumulateValuesPair(
            rest, valueStride: valueStride, w.0, w.1, n: n, groups: groups - g, into: out.0 + 32 * g, out.1 + 32 * g,
            build: build)
        accumulateValuesPair(
            rest, valueStride: valueStride, w.2, w.3, n: n, groups: groups - g, into: out.2 + 32 * g, out.3 + 32 * g,
            build: build)
    }
}

/// The queries of one `attendFloatCacheTiled` call: `tokens` consecutive tokens × `heads` query heads that share a
/// KV head. Query (t, h) is at `base + t · tokenStride + h · headStride` and its output at `out + t · outTokenStride +
/// h · outHeadStride`; token t attends positions `firsts[t]..<counts[t]` (its causal end and, with a sliding window,
/// its first position).
public struct TiledQueries {
    public var base: UnsafePointer<Float>
    public var heads: Int
    public var headStride: Int
    public var tokens: Int
    public var tokenStride: Int
    public var firsts: UnsafePointer<Int>
    public var counts: UnsafePointer<Int>
    public var out: UnsafeMutablePointer<Float>
    public var outHeadStride: Int
    public var outTokenStride: Int

    @inlinable
    public init(
        base: UnsafePointer<Float>, heads: Int, headStride: Int, tokens: Int, tokenStride: Int,
        firsts: UnsafePointer<Int>, counts: UnsafePointer<Int>, out: UnsafeMutablePointer<Float>, outHeadStride: Int,
        outTokenStride: Int
    ) {
        (self.base, self.heads, self.headStride, self.tokens, self.tokenStride) =
            (base, heads, headStride, tokens, tokenStride)
        (self.firsts, self.counts, self.out, self.outHeadStride, self.outTokenStride) =
            (firsts, counts, out, outHeadStride, outTokenStride)
    }

    /// Queries in all.
    @inlinable public var count: Int { tokens * heads }
    /// Query `j` (token `j / heads`, head `j % heads`).
    @inlinable public func query(_ j: Int) -> UnsafePointer<Float> {
        base + j / heads * tokenStride + j % heads * headStride
    }
    /// Query `j`'s output row.
    @inlinable public func output(_ j: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(out + j / heads * outTokenStride + j % heads * outHeadStride)
    }
    /// Scratch floats `attendFloatCacheTiled` needs for these queries.
    @inlinable public static func weightCount(queries: Int) -> Int { queries * (attentionTileSize + 2) }
}

/// Attention outputs of `queries` (a block of tokens × the query heads that share a KV head) over the same keys
/// and values, each as llama.cpp's tiled flash-attention path (batches of 64 queries or more) computes it, over
/// keys and values converted to float:
///
/// - per tile of 64 positions, scores are sequential FMA chains over the head dimensions (simd_gemm), scaled;
/// - the running maximum grows tile by tile (the sum and the output are rescaled by `expf(old − new)`), the
///   weights are ggml_v_expf(score − max) summed eight at a time into a double, and the output accumulates
///   `fma(v, weight, out)` position by position;
/// - the output is divided by the weight sum at the end.
///
/// Each query's arithmetic is its own and the same whatever else is in the call: a query takes part in the tiles
/// from the one holding its first position to the one holding its last, as it would alone (llama.cpp skips a
/// query's tiles that its mask hides whole). Taking the queries together, tile by tile (the queries of every token
/// that sees the tile, four or two at a time, across tokens), reads each tile of keys and values once per block of
/// tokens instead of once per token and head: at a depth of
/// thousands of positions a KV head's keys and values are megabytes, more than a level-2 cache holds.
///
/// - Parameters:
///   - queries: the queries, their outputs and ranges; rows of `dimensions` floats (a multiple of 8), natural order,
///     not rounded.
///   - keysTransposed: these heads' keys dimension-major, tile by tile: dimension `i` of position `64k + j` at
///     `keysTransposed[k · tileStride + i · keyStride + j]`. Tiles are read whole (the positions past a query's
///     count may hold anything: their scores are masked). The engine lays each tile out as one block (`keyStride`
///     64), so that its rows do not share cache sets; one matrix of `dimensions` rows is `tileStride` 64.
///   - values: this head's first value row; rows are `valueStride` floats apart.
///   - softCap: as in `attendHalfCacheVectorPath` (ggml: the tile's scores through tanh, then times the cap).
///   - weights: scratch of `TiledQueries.weightCount(queries: queries.count)` floats.
///   - quads: take queries four at a time where they can (`tileScoresQuad`, `accumulateValuesQuad`): for builds
///     with 32 vector registers (AVX-512); the others take two.
///   - build: the calling kernel build's type, as for `multiplyRows`: this function and its helpers are too large
///     to be inlined whole, and the helpers' out-of-line copies must be the caller's build's, not the portable one.
@inline(__always)
@inlinable
public func attendFloatCacheTiled<Build>(
    _ queries: TiledQueries, keysTransposed: UnsafePointer<Float>, keyStride: Int, tileStride: Int,
    values: UnsafePointer<Float>, valueStride: Int, dimensions: Int, scale: Float, softCap: Float = 0,
    weights: UnsafeMutablePointer<Float>, quads: Bool = false, build: Build.Type
) {
    let groups = dimensions / 8
    let scale = softCap == 0 ? scale : scale / softCap
    let queryCount = queries.count
    let heads = queries.heads
    let maxScores = weights + queryCount * attentionTileSize
    let sums = maxScores + queryCount
    var lowest = Int.max
    var highest = 0
    for t in 0..<queries.tokens {
        lowest = min(lowest, queries.firsts[t] / attentionTileSize * attentionTileSize)
        highest = max(highest, queries.counts[t])
    }
    for j in 0..<queryCount {
        let o = queries.output(j)
        for g in 0..<groups { o.storeBytes(of: SIMD8<Float>(), toByteOffset: 32 * g, as: SIMD8<Float>.self) }
        maxScores[j] = -.infinity
        sums[j] = 0
    }
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * queryCount) { lists in
        guard let active = lists.baseAddress else { return }
        let valueCounts = active + queryCount
        var tileStart = lowest
        while tileStart < highest {
            let column = UnsafeRawPointer(keysTransposed + tileStart / attentionTileSize * tileStride)
            let v = values + tileStart * valueStride
            // The queries whose token sees this tile, in order, with the tile's value rows each token reads.
            var count = 0
            for t in 0..<queries.tokens {
                let first = queries.firsts[t]
                guard tileStart >= first / attentionTileSize * attentionTileSize, tileStart < queries.counts[t] else {
                    continue
                }
                let n = min(attentionTileSize, queries.counts[t] - tileStart)
                for j in (t * heads)..<(t * heads + heads) {
                    (active[count], valueCounts[count]) = (j, n)
                    count += 1
                }
            }
            @inline(__always) func w(_ i: Int) -> UnsafeMutablePointer<Float> {
                weights + active[i] * attentionTileSize
            }
            @inline(__always) func o(_ i: Int) -> UnsafeMutableRawPointer { queries.output(active[i]) }
            @inline(__always) func q(_ i: Int) -> UnsafePointer<Float> { queries.query(active[i]) }
            // Scores of the whole tile (positions past a token's count are computed and then masked), four, two or
            // one query at a time.
            var i = 0
            while quads && i + 4 <= count {
                tileScoresQuad(
                    (q(i), q(i + 1), q(i + 2), q(i + 3)), column: column, keyStride: keyStride, dimensions: dimensions,
                    scale: scale, into: (w(i), w(i + 1), w(i + 2), w(i + 3)), build: build)
                i += 4
            }
            while i + 2 <= count {
                tileScoresPair(
                    q(i), q(i + 1), column: column, keyStride: keyStride, dimensions: dimensions, scale: scale,
                    into: w(i), w(i + 1), build: build)
                i += 2
            }
            if i < count {
                tileScores(
                    query: q(i), column: column, keyStride: keyStride, dimensions: dimensions, scale: scale,
                    into: w(i), build: build)
            }
            for i in 0..<count {
                let first = queries.firsts[active[i] / heads]
                tileWeights(
                    w(i), n: valueCounts[i], masked: max(0, first - tileStart), softCap: softCap,
                    maxScore: &maxScores[active[i]], sum: &sums[active[i]], out: o(i), groups: groups, build: build)
            }
            // The value sums, four or two queries at a time where they read the same rows.
            i = 0
            while i < count {
                let n = valueCounts[i]
                if quads && i + 4 <= count && valueCounts[i + 3] == n && valueCounts[i + 1] == n
                    && valueCounts[i + 2] == n
                {
                    accumulateValuesQuad(
                        v, valueStride: valueStride,
                        (
                            UnsafePointer(w(i)), UnsafePointer(w(i + 1)), UnsafePointer(w(i + 2)),
                            UnsafePointer(w(i + 3))
                        ),
                        n: n, groups: groups,
                        into: (o(i), o(i + 1), o(i + 2), o(i + 3)), build: build)
                    i += 4
                } else if i + 2 <= count && valueCounts[i + 1] == n {
                    accumulateValuesPair(
                        v, valueStride: valueStride, w(i), w(i + 1), n: n, groups: groups, into: o(i), o(i + 1),
                        build: build)
                    i += 2
                } else {
                    accumulateValues(
                        v, valueStride: valueStride, weights: w(i), n: n, groups: groups, into: o(i), build: build)
                    i += 1
                }
            }
            tileStart += attentionTileSize
        }
    }
    for j in 0..<queryCount {
        let o = queries.output(j)
        let inverse: Float = sums[j] == 0 ? 0 : 1 / sums[j]
        for g in 0..<groups {
            o.storeBytes(
                of: o.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self) * inverse,
                toByteOffset: 32 * g, as: SIMD8<Float>.self)
        }
    }
}

/// One query's step of `attendFloatCacheTiled` between its tile's scores and its values: soft cap and masks (the
/// positions from `n`, and the first `masked`), the new maximum (rescaling `sum` and the `groups` · 8 outputs at
/// `out` when it grows), and the scores turned into weights (ggml_vec_soft_max_f32: ggml_v_expf(score − max), eight
/// at a time, each group summed as hsum_float_8, the groups in double) added to `sum`.
@inline(__always)
@inlinable
func tileWeights<Build>(
    _ weights: UnsafeMutablePointer<Float>, n: Int, masked: Int, softCap: Float, maxScore: inout Float,
    sum: inout Float, out o: UnsafeMutableRawPointer, groups: Int, build: Build.Type
) {
    if softCap != 0 {
        for i in 0..<attentionTileSize { weights[i] = softCap * tanhf(weights[i]) }
    }
    for i in n..<attentionTileSize { weights[i] = -.infinity }
    for i in 0..<masked { weights[i] = -.infinity }
    let newMax = max(maxScore, tileMaximum(weights))
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
    var total: Double = 0
    for chunk in 0..<(attentionTileSize / 8) {
        let raw = UnsafeMutableRawPointer(weights + 8 * chunk)
        let v = raw.loadUnaligned(as: SIMD8<Float>.self)
        // Masked positions (−∞) weigh 0; the others ggml_v_expf(score − max).
        let masked = v .== -.infinity
        let w = llamaExp((v - newMax).replacing(with: 0, where: masked)).replacing(with: 0, where: masked)
        raw.storeBytes(of: w, as: SIMD8<Float>.self)
        let r = w.highHalf + w.lowHalf
        total += Double((r[0] + r[2]) + (r[1] + r[3]))
    }
    sum = Float(Double(sum) + total)
}

/// The largest of a tile's 64 scores (−∞ for a tile of masked positions), eight lanes at a time. Where signed zeros
/// tie, the lane order can pick either zero; that cannot change a weight (`score − max` and `expf(old − new)` come out
/// the same for either zero).
@inline(__always)
@inlinable
func tileMaximum(_ weights: UnsafeMutablePointer<Float>) -> Float {
    let raw = UnsafeRawPointer(weights)
    var lanes = SIMD8<Float>(repeating: -.infinity)
    for chunk in 0..<(attentionTileSize / 8) {
        let v = raw.loadUnaligned(fromByteOffset: 32 * chunk, as: SIMD8<Float>.self)
        lanes.replace(with: v, where: lanes .<= v)
    }
    var tileMax = -Float.infinity
    for lane in 0..<8 { tileMax = max(tileMax, lanes[lane]) }
    return tileMax
}

/// Rows `rows` of a matrix of halves, `columns` per row (row t at `halves + t · columns`), converted to floats and
/// transposed tile by tile, as `attendFloatCacheTiled` reads keys: value i of row t at
/// `out[t / tile · tile · columns + i · tile + t % tile]`. Eight values at a time (`loadHalves8`), then one by one.
@inline(__always)
@inlinable
public func halvesToFloatsTiled(
    _ halves: UnsafePointer<UInt16>, rows: Range<Int>, columns: Int, tile: Int, out: UnsafeMutablePointer<Float>
) {
    let source = UnsafeRawPointer(halves)
    for t in rows {
        let row = source + 2 * t * columns
        let column = out + t / tile * tile * columns + t % tile
        var i = 0
        while i + 8 <= columns {
            let v = loadHalves8(row + 2 * i)
            for k in 0..<8 { column[(i + k) * tile] = v[k] }
            i += 8
        }
        while i < columns {
            column[i * tile] = convertHalf(row, 2 * i)
            i += 1
        }
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
