import Foundation
import GGUF

// A KV cache whose keys or values (or both) are stored as Q8_0, as llama.cpp's `-ctk q8_0` / `-ctv q8_0` keep them,
// and attention over it as llama.cpp's CPU flash attention computes it then. With a Q8_0 side llama.cpp has one
// path for every batch size (ggml_compute_forward_flash_attn_ext_f16_one_chunk; its tiled path and its split-KV
// decode path take F16 caches only), so prompts and generation both go through `attendCacheVectorPath`:
//
// - keys and values enter the cache through the type's `from_float` (ggml_set_rows): Q8_0 rows quantized as
//   `quantize_row_q8_0` (`quantizeBlocksQ8_0`), F16 rows rounded to half;
// - the query is converted to the keys' dot-product type: Q8_0 (`quantizeRowQ8_0`) for Q8_0 keys, half for F16;
// - scores are `ggml_vec_dot_q8_0_q8_0` (`dotLaneBlocks`) or `ggml_vec_dot_f16`;
// - values accumulate in float (`VKQ32 = fma(dequantized v, w, VKQ32)`, rescaled `VKQ32 · ms`) for Q8_0 values,
//   in half (rounded after every update) for F16 values.

/// The cache types the engine stores: llama.cpp's default F16, and Q8_0 (half the memory again).
public let kvCacheTypes: [GGMLType] = [.f16, .q8_0]

/// Bytes of one cache row of `count` values (a multiple of 32 for Q8_0) stored as `type` (one of `kvCacheTypes`).
@inlinable
public func kvCacheRowBytes(_ type: GGMLType, count: Int) -> Int { type.bytes(count: count) }

/// Stores `count` floats as cache row type `type` at `out`: halves, or Q8_0 blocks (`quantizeBlocksQ8_0`).
@inline(__always)
@inlinable
public func storeCacheRow(_ x: UnsafePointer<Float>, as type: GGMLType, into out: UnsafeMutableRawPointer, count: Int) {
    if type == .q8_0 {
        quantizeBlocksQ8_0(x, count: count, into: out)
    } else {
        storeHalves(x, into: out.assumingMemoryBound(to: UInt16.self), count: count)
    }
}

/// `count` floats (a multiple of 32) as Q8_0 blocks (a half scale, then 32 int8), as ggml's x86 `quantize_row_q8_0`
/// writes them: the scale and quants of `quantizeRowQ8_0`, the scale stored as a half.
@inline(__always)
@inlinable
public func quantizeBlocksQ8_0(_ x: UnsafePointer<Float>, count: Int, into out: UnsafeMutableRawPointer) {
    for b in 0..<count / 32 {
        let v = x + b * 32
        let block = out + b * q8_0BlockBytes
        let (d, id) = q8_0Scale(v)
        block.storeBytes(of: floatToHalf(d), as: UInt16.self)
        let q = (block + 2).assumingMemoryBound(to: Int8.self)
        for i in 0..<32 { q[i] = Int8(truncatingIfNeeded: roundToNearestEven(v[i] * id)) }
    }
}

/// The scratch `attendCacheVectorPath` needs for heads of `dimensions` values, in floats.
@inlinable
public func cacheVectorPathScratch(dimensions: Int) -> Int { 5 * dimensions + 8 }

/// llama.cpp's vector flash-attention path for one query and one head over a cache whose keys and values are each
/// F16 or Q8_0 (`attendHalfCacheVectorPath` is the faster form of the all-F16 case), operation by operation: the
/// query in the keys' dot type, scores `ggml_vec_dot_q8_0_q8_0` or `ggml_vec_dot_f16`, an online softmax over the
/// positions in order (`S = fma(S, ms, vs)`), the value sum in float for Q8_0 values and in half for F16 values,
/// divided by the weight sum at the end.
///
/// - Parameters:
///   - query: `dimensions` floats (a multiple of 32), not rounded.
///   - keys, values: this head's slice of the first cached row; rows are `keyStride` and `valueStride` bytes apart.
///   - keyType, valueType: `.f16` or `.q8_0`.
///   - softCap: as in `attendHalfCacheVectorPath`.
///   - scratch: `cacheVectorPathScratch(dimensions:)` floats.
///   - out: `dimensions` floats.
@inline(__always)
@inlinable
public func attendCacheVectorPath(
    query: UnsafePointer<Float>, keys: UnsafeRawPointer, keyType: GGMLType, keyStride: Int, values: UnsafeRawPointer,
    valueType: GGMLType, valueStride: Int, count: Int, dimensions: Int, scale: Float, softCap: Float = 0,
    scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
) {
    let hd = dimensions
    let scale = softCap == 0 ? scale : scale / softCap
    let accumulator = scratch
    let dequantized = scratch + hd
    let converted = scratch + 2 * hd  // the half-rounded query, or the Q8_0 query's block scales
    let pairs = UnsafeMutableRawPointer(scratch + 3 * hd).assumingMemoryBound(to: Int16.self)
    let quants = UnsafeMutableRawPointer(scratch + 4 * hd).assumingMemoryBound(to: Int8.self)
    let row = ActivationRow(
        floats: converted, quants: quants, pairs: pairs, scales: converted, sums: converted + hd / 32,
        blockSums: UnsafeMutableRawPointer(scratch + 4 * hd + hd / 4).assumingMemoryBound(to: Int32.self))
    if keyType == .q8_0 {
        quantizeRowQ8_0(query, count: hd, into: row, withSums: false)
    } else {
        for i in 0..<hd { converted[i] = roundToHalf(query[i]) }
    }
    let halfValues = valueType != .q8_0
    for i in 0..<hd { accumulator[i] = 0 }
    var sum: Float = 0
    var maxScore = -Float.infinity
    for t in 0..<count {
        let key = keys + t * keyStride
        let score =
            keyType == .q8_0
            ? dotLaneBlocks(Q8_0Rows.self, key, row, count: hd)
            : llamaDotHalf(key.assumingMemoryBound(to: UInt16.self), converted, count: hd)
        let (ms, vs, grew) = onlineSoftmaxStep(score, scale: scale, softCap: softCap, maxScore: &maxScore)
        if grew {
            if halfValues {
                for i in 0..<hd { accumulator[i] = roundToHalf(accumulator[i] * ms) }
            } else {
                for i in 0..<hd { accumulator[i] *= ms }
            }
        }
        let v = values + t * valueStride
        if halfValues {
            let halves = v.assumingMemoryBound(to: UInt16.self)
            for i in 0..<hd {
                accumulator[i] = roundToHalf(fusedMultiplyAdd(halfToFloatTable[Int(halves[i])], vs, accumulator[i]))
            }
        } else {
            Q8_0Rows.dequantizeRow(v, dequantized, count: hd)
            for i in 0..<hd { accumulator[i] = fusedMultiplyAdd(dequantized[i], vs, accumulator[i]) }
        }
        sum = fusedMultiplyAdd(sum, ms, vs)
    }
    let inverse: Float = sum == 0 ? 0 : 1 / sum
    for i in 0..<hd { out[i] = accumulator[i] * inverse }
}

/// The Walsh–Hadamard rotations llama.cpp b11434 applies around a quantized cache (llama_kv_cache's `n_rot_k` and
/// `n_rot_v`, PR 21038), which spread each head's outliers over its values before they are quantized: with Q8_0
/// keys, queries and keys are rotated in blocks of `keys` values (64, doubled while it divides the head size); with
/// Q8_0 values, values are rotated in blocks of 64 and the attention output rotated back (the rotation is its own
/// inverse). 0 where there is none: an F16 side, or heads whose size is not a multiple of 64.
public func cacheRotations(keyType: GGMLType, valueType: GGMLType, headDimension hd: Int) -> (keys: Int, values: Int) {
    guard hd > 0, hd % 64 == 0 else { return (0, 0) }
    var keys = 0
    if keyType == .q8_0 {
        keys = 64
        while hd % (2 * keys) == 0 { keys *= 2 }
    }
    return (keys, valueType == .q8_0 ? 64 : 0)
}

/// Rotates each block of `size` (a power of two) floats of the `count` at `x` by the orthonormal Walsh–Hadamard
/// matrix, as ggml's CPU `ggml_compute_forward_fwht` does (the matrix product llama.cpp hints as Hadamard): the block
/// times `1 / sqrtf(size)` first, then butterflies `(u + v, u − v)` over distances 1, 2, 4, … — each value one
/// fixed sequence of roundings, whatever the SIMD width.
@inlinable
public func rotateWalshHadamard(_ x: UnsafeMutablePointer<Float>, count: Int, size n: Int) {
    let scale: Float = 1 / Float(n).squareRoot()
    for start in Swift.stride(from: 0, to: count, by: n) {
        let row = x + start
        for j in 0..<n { row[j] *= scale }
        var distance = 1
        while distance < n {
            for i in Swift.stride(from: 0, to: n, by: 2 * distance) {
                for j in i..<(i + distance) {
                    let (u, v) = (row[j], row[j + distance])
                    row[j] = u + v
                    row[j + distance] = u - v
                }
            }
            distance *= 2
        }
    }
}
