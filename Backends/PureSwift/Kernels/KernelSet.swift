import GGUF

/// The hot loops of the engine, as one CPU-specific build.
///
/// Swift compiles a module for one CPU target. Built for the x86-64 baseline (SSE2), fused multiply-adds become
/// calls into libm and wide integer vectors split into many narrow instructions, which makes the kernels several
/// times slower; built for a newer CPU, the same source runs on that CPU only (elsewhere: SIGILL). So the kernels'
/// entry points are compiled several times from one source file, `BuiltKernels.swift`: here (the portable build,
/// any CPU Swift runs on), and in the `PureSwiftKernelsAVX2`, `PureSwiftKernelsAVX512` and
/// `PureSwiftKernelsAVX512VNNI` modules (Backends/PureSwift/ISA), which link the same file and are compiled with
/// `-target-cpu`. The kernels themselves are
/// `@inlinable`, so each build inlines and compiles them for its own target. The engine picks the fastest build
/// the running CPU supports at run time (PureSwiftBackend's `KernelBuilds`).
///
/// Every build computes the same results bit for bit: the kernels use only operations with one defined rounding
/// (an FMA is `addingProduct`, one instruction or libm's exact `fmaf`), so the choice changes speed only.
public protocol KernelSet: Sendable {
    /// The build's name: "portable", "avx2", "avx512" or "avx512vnni".
    var name: String { get }

    /// `multiplyRows`: rows `rows` of `w` times every prepared activation row.
    func multiplyRows(
        _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int)

    /// `multiplyPackedF32Blocks`: blocks of six activation rows times a packed F32 matrix (encoders).
    func multiplyPackedF32(
        _ w: PackedF32Matrix, _ a: UnsafePointer<Float>, rows: Int, blocks: Range<Int>, out: UnsafeMutablePointer<Float>
    )

    /// `prepareActivationRow`: one row of floats converted for the integer kernels.
    func prepareActivationRow(
        _ source: UnsafePointer<Float>, count: Int, into out: ActivationRow, format: ActivationFormat)

    /// `attendHalfCacheVectorPath`: one head's attention for one query, llama.cpp's vector path (`softCap` 0: none).
    func attendHalfCacheVectorPath(
        query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
        count: Int, dimensions: Int, scale: Float, softCap: Float, scratch: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>)

    /// `attendHalfCacheVectorPathHeads`: the query heads of one or more KV heads for one query position, llama.cpp's
    /// vector path, in one pass over the cache (`out` nil: their partials left in `scratch`).
    func attendHalfCacheVectorPathHeads(
        queries: UnsafePointer<Float>, heads: Int, kvHeads: Int, keys: UnsafePointer<UInt16>,
        values: UnsafePointer<UInt16>, stride: Int, count: Int, dimensions: Int, scale: Float, softCap: Float,
        scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>?)

    /// `attendCacheVectorPath`: one head's attention for one query over a cache with Q8_0 keys or values,
    /// llama.cpp's vector path (`softCap` 0: none).
    func attendCacheVectorPath(
        query: UnsafePointer<Float>, keys: UnsafeRawPointer, keyType: GGMLType, keyStride: Int,
        values: UnsafeRawPointer, valueType: GGMLType, valueStride: Int, count: Int, dimensions: Int, scale: Float,
        softCap: Float, scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>)

    /// `attendFloatCacheTiled`: the attention of a block of tokens' query heads that share a KV head, each query
    /// over its token's positions as llama.cpp's tiled path computes it (`softCap` 0: none).
    func attendFloatCacheTiled(
        _ queries: TiledQueries, keysTransposed: UnsafePointer<Float>, keyStride: Int, tileStride: Int,
        values: UnsafePointer<Float>, valueStride: Int, dimensions: Int, scale: Float, softCap: Float,
        weights: UnsafeMutablePointer<Float>)

    /// `halvesToFloats`: `count` halves converted to floats (the F16C instruction where the build has it).
    func halvesToFloats(_ halves: UnsafePointer<UInt16>, _ out: UnsafeMutablePointer<Float>, count: Int)

    /// `halvesToFloatsTiled`: rows of halves converted to floats and transposed tile by tile (the tiled path's keys).
    func halvesToFloatsTiled(
        _ halves: UnsafePointer<UInt16>, rows: Range<Int>, columns: Int, tile: Int, out: UnsafeMutablePointer<Float>)

    /// `swiGLUExact` over `count` values.
    func swiGLU(gate: UnsafePointer<Float>, up: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int)

    /// `geluExact` (ggml's tanh-approximated GELU) over `count` values, times `up` when given (GEGLU).
    func gelu(_ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int)

    /// `geluErfExact` (the erf GELU) over `count` values, times `up` when given.
    func geluErf(_ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int)

    /// `geluErfApproximate` (SIMD erf, for encoders) over `count` values.
    func geluErfApproximate(_ x: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int)

    /// `applyRoPEExact` on `heads` consecutive heads of `dimensions` values.
    func applyRoPE(
        _ x: UnsafeMutablePointer<Float>, heads: Int, table: UnsafePointer<Float>, dimensions: Int, mode: RoPEMode)
}

extension KernelSet {
    /// `attendFloatCacheTiled` for one token's `queryCount` query heads (rows `queryStride` apart, outputs
    /// `outStride` apart) over positions `first..<count`.
    public func attendFloatCacheTiled(
        queries: UnsafePointer<Float>, queryCount: Int, queryStride: Int, keysTransposed: UnsafePointer<Float>,
        keyStride: Int, tileStride: Int, values: UnsafePointer<Float>, valueStride: Int, from first: Int, count: Int,
        dimensions: Int, scale: Float, softCap: Float, weights: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>, outStride: Int
    ) {
        withUnsafePointer(to: first) { firsts in
            withUnsafePointer(to: count) { counts in
                attendFloatCacheTiled(
                    TiledQueries(
                        base: queries, heads: queryCount, headStride: queryStride, tokens: 1, tokenStride: 0,
                        firsts: firsts, counts: counts, out: out, outHeadStride: outStride, outTokenStride: 0),
                    keysTransposed: keysTransposed, keyStride: keyStride, tileStride: tileStride, values: values,
                    valueStride: valueStride, dimensions: dimensions, scale: scale, softCap: softCap, weights: weights)
            }
        }
    }
}
