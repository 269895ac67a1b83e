import Foundation

// Attention over a half-precision KV cache, as llama.cpp's CPU flash attention computes it. It has two paths, and
// small models are sensitive enough to their rounding that agreeing with llama.cpp token for token needs both:
//
// - batches of fewer than 64 queries (token-by-token generation, short prompts): the query is rounded to half, and
//   an online softmax walks the positions in order, keeping the weighted sum of values in half precision (rounded
//   after every update);
// - batches of 64 or more (prompt processing, perplexity): keys and values are converted to float, and query,
//   scores and the value sum stay in float.

/// The batch size from which llama.cpp's CPU flash attention switches to its tiled float path (GGML_FA_TILE_Q).
public let halfAccumulationBatchLimit = 64

/// The dot product of a half row and a (half-rounded) float query exactly as ggml's AVX2 `ggml_vec_dot_f16` sums
/// it: four 8-lane FMA accumulators over steps of 32, reduced pairwise; a tail of fewer than 32 added in double.
@inline(__always)
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

/// llama.cpp's vector flash-attention path (batches under 64 queries) for one query and one head, reproduced
/// operation by operation: half-rounded query (natural order, not even/odd), scores from `llamaDotHalf`, an online
/// softmax over the positions in order with the value sum kept in half precision (`VKQ = half(fma(v, w, VKQ))`,
/// rescaled as `half(VKQ · m)` when the maximum grows), divided by the weight sum at the end.
///
/// - Parameters:
///   - query: `dimensions` half-rounded floats in natural order.
///   - keys, values: first cached row of this head; rows are `stride` halves apart.
///   - accumulator: scratch of `dimensions` floats.
///   - out: `dimensions` floats.
@inline(__always)
public func attendHalfCacheVectorPath(
    query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
    count: Int, dimensions: Int, scale: Float, accumulator: UnsafeMutablePointer<Float>,
    out: UnsafeMutablePointer<Float>
) {
    for i in 0..<dimensions { accumulator[i] = 0 }
    var sum: Float = 0
    var maxScore = -Float.infinity
    for t in 0..<count {
        let s = llamaDotHalf(keys + t * stride, query, count: dimensions) * scale
        var ms: Float = 1
        var vs: Float = 1
        if s > maxScore {
            ms = expf(maxScore - s)
            maxScore = s
            for i in 0..<dimensions { accumulator[i] = roundToHalf(accumulator[i] * ms) }
        } else {
            vs = expf(s - maxScore)
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

/// Stores `count` floats as halves.
@inline(__always)
public func storeHalves(_ x: UnsafePointer<Float>, into out: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { out[i] = floatToHalf(x[i]) }
}

/// One head's attention output for one query over keys and values already converted to float (llama.cpp's tiled
/// path converts its K/V tiles the same way): `out = Σₜ softmax(scale · q·kₜ) vₜ`, all in float.
///
/// - Parameters:
///   - query: `dimensions` floats (a multiple of 8), natural order.
///   - keys, values: first row of this head; rows are `stride` floats apart.
///   - scores: scratch of at least `count` floats.
///   - out: `dimensions` floats.
@inline(__always)
public func attendFloatCache(
    query: UnsafePointer<Float>, keys: UnsafePointer<Float>, values: UnsafePointer<Float>, stride: Int, count: Int,
    dimensions: Int, scale: Float, scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
) {
    let groups = dimensions / 8
    let q = UnsafeRawPointer(query)
    var maxScore = -Float.infinity
    for t in 0..<count {
        let k = UnsafeRawPointer(keys + t * stride)
        var acc = SIMD8<Float>()
        for g in 0..<groups {
            acc +=
                k.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
                * q.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
        }
        let s = acc.sum() * scale
        scores[t] = s
        maxScore = max(maxScore, s)
    }
    var sum: Float = 0
    for t in 0..<count {
        let e = expf(scores[t] - maxScore)
        scores[t] = e
        sum += e
    }
    let o = UnsafeMutableRawPointer(out)
    for g in 0..<groups { o.storeBytes(of: SIMD8<Float>(), toByteOffset: 32 * g, as: SIMD8<Float>.self) }
    for t in 0..<count {
        let v = UnsafeRawPointer(values + t * stride)
        let p = SIMD8<Float>(repeating: scores[t])
        for g in 0..<groups {
            let a = o.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self)
            o.storeBytes(
                of: a + v.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self) * p, toByteOffset: 32 * g,
                as: SIMD8<Float>.self)
        }
    }
    let inverse = SIMD8<Float>(repeating: sum > 0 ? 1 / sum : 0)
    for g in 0..<groups {
        o.storeBytes(
            of: o.loadUnaligned(fromByteOffset: 32 * g, as: SIMD8<Float>.self) * inverse, toByteOffset: 32 * g,
            as: SIMD8<Float>.self)
    }
}

/// Converts `count` halves to floats (vectorized; `count` any size).
@inline(__always)
public func halvesToFloats(_ h: UnsafePointer<UInt16>, _ out: UnsafeMutablePointer<Float>, count: Int) {
    var i = 0
    let src = UnsafeRawPointer(h)
    let dst = UnsafeMutableRawPointer(out)
    while i + 16 <= count {
        let pairs = src.loadUnaligned(fromByteOffset: 2 * i, as: SIMD8<UInt32>.self)
        let even = halvesToFloats(pairs & 0xFFFF)
        let odd = halvesToFloats(pairs &>> 16)
        var lo = SIMD8<Float>()
        var hi = SIMD8<Float>()
        for j in 0..<4 {
            lo[2 * j] = even[j]
            lo[2 * j + 1] = odd[j]
            hi[2 * j] = even[4 + j]
            hi[2 * j + 1] = odd[4 + j]
        }
        dst.storeBytes(of: lo, toByteOffset: 4 * i, as: SIMD8<Float>.self)
        dst.storeBytes(of: hi, toByteOffset: 4 * i + 32, as: SIMD8<Float>.self)
        i += 16
    }
    while i < count {
        out[i] = halfToFloatTable[Int(h[i])]
        i += 1
    }
}
