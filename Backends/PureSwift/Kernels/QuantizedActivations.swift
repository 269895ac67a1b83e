/// The form a weight type's dot product wants its activations in (ggml's `vec_dot_type`): quantizing the input
/// vector once per matrix product lets every row's dot product run on integers, and rounds the activations exactly
/// as llama.cpp's CPU backend does, so results agree with it.
public enum ActivationFormat: Sendable, Equatable {
    /// Plain floats (F32 weights).
    case f32
    /// Floats rounded to half precision (F16 weights).
    case f16
    /// Floats rounded to bfloat16 (BF16 weights).
    case bf16
    /// 32-value blocks of int8 with a half-precision scale (Q8_0, Q4_0, Q5_0 weights).
    case q8_0
    /// Q8_0 plus each block's scaled sum (Q4_1 weights, whose blocks have an offset).
    case q8_1
    /// 256-value blocks of int8 with a float scale and 16-value partial sums (K-quants).
    case q8_K
    /// `.q8_K` as llama.cpp's AVX2 build quantizes the activations of repacked Q4_K matrices: rows in groups of four
    /// with ggml_quantize_mat_q8_K_4x8, which takes the scale's sign from a positive value where a block's largest
    /// magnitude occurs with both signs (`quantizeRowQ8_K`); the rows after the last full group as `.q8_K`.
    case q8_KRepacked

    /// The format of row `row` of `rows` prepared together.
    @inlinable
    public func forRow(_ row: Int, of rows: Int) -> ActivationFormat {
        self == .q8_KRepacked && row >= rows - rows % 4 ? .q8_K : self
    }

    /// Elements per block of this format.
    public var blockSize: Int {
        switch self {
        case .f32, .f16, .bf16: return 1
        case .q8_0, .q8_1: return 32
        case .q8_K, .q8_KRepacked: return 256
        }
    }
}

/// One row of prepared activations: pointers into a `QuantizedActivations` buffer.
///
/// For `.q8_0`/`.q8_1`: `quants` holds the int8 values, `scales[b]` block b's scale (the half-rounded value, as a
/// float), `sums[b]` (Q8_1 only) the half-rounded `scale × Σ quants`, and `pairs` the same quants widened to 16 bits
/// in the pair layout the integer kernels read: per block the 16 even elements (0, 2, …, 30), then the 16 odd ones.
/// For `.q8_K`: `scales[b]` the float scale and `blockSums[16·b + j]` the sum of quants j·16 ..< j·16+16. For float formats, `floats` holds the (rounded) values.
public struct ActivationRow {
    public var floats: UnsafeMutablePointer<Float>
    public var quants: UnsafeMutablePointer<Int8>
    public var pairs: UnsafeMutablePointer<Int16>
    public var scales: UnsafeMutablePointer<Float>
    public var sums: UnsafeMutablePointer<Float>
    public var blockSums: UnsafeMutablePointer<Int32>

    @inlinable
    public init(
        floats: UnsafeMutablePointer<Float>, quants: UnsafeMutablePointer<Int8>, pairs: UnsafeMutablePointer<Int16>,
        scales: UnsafeMutablePointer<Float>, sums: UnsafeMutablePointer<Float>, blockSums: UnsafeMutablePointer<Int32>
    ) {
        self.floats = floats
        self.quants = quants
        self.pairs = pairs
        self.scales = scales
        self.sums = sums
        self.blockSums = blockSums
    }

    /// The row `rows` rows further on in a buffer of rows of `columns` values (`QuantizedActivations.row`).
    @inline(__always)
    @inlinable
    public func advanced(rows: Int, columns: Int) -> ActivationRow {
        ActivationRow(
            floats: floats + rows * columns, quants: quants + rows * columns, pairs: pairs + rows * columns,
            scales: scales + rows * (columns / 32), sums: sums + rows * (columns / 32),
            blockSums: blockSums + rows * (columns / 16))
    }
}

/// A reusable buffer of `rows × columns` activations in one `ActivationFormat`. Sized once for the largest input a
/// model needs, so preparing the input of a matrix product allocates nothing.
///
/// For `.q8_0`/`.q8_1` the block scales and sums are also kept block-major (`scalesByBlock[b · paddedRows + r]`,
/// likewise `sumsByBlock`), so that kernels working on eight activation rows at once read one block's eight
/// scales with one load. Rows are padded to a multiple of eight (`paddedRows`); the padding rows have zero scales
/// and sums and zero quants, so a kernel may run them and drop their results.
public final class QuantizedActivations {
    public let capacityRows: Int
    public let capacityColumns: Int
    public private(set) var format: ActivationFormat = .f32
    public private(set) var rows = 0
    public private(set) var columns = 0
    /// `rows` rounded up to a multiple of eight: the row stride of `scalesByBlock` and `sumsByBlock`.
    public private(set) var paddedRows = 0
    @usableFromInline let floats: UnsafeMutablePointer<Float>
    @usableFromInline let quants: UnsafeMutablePointer<Int8>
    @usableFromInline let pairs: UnsafeMutablePointer<Int16>
    @usableFromInline let scales: UnsafeMutablePointer<Float>
    @usableFromInline let sums: UnsafeMutablePointer<Float>
    @usableFromInline let blockSums: UnsafeMutablePointer<Int32>
    public let scalesByBlock: UnsafeMutablePointer<Float>
    public let sumsByBlock: UnsafeMutablePointer<Float>

    /// `columns` must be a multiple of 32 for the block formats (256 for `.q8_K`).
    public init(rows: Int, columns: Int) {
        capacityRows = max(1, rows)
        capacityColumns = max(1, columns)
        let padded = (capacityRows + 7) / 8 * 8
        let n = padded * capacityColumns
        floats = .allocate(capacity: n)
        quants = .allocate(capacity: n)
        quants.initialize(repeating: 0, count: n)
        pairs = .allocate(capacity: n)
        scales = .allocate(capacity: n / 32 + padded)
        sums = .allocate(capacity: n / 32 + padded)
        blockSums = .allocate(capacity: n / 16 + padded)
        scalesByBlock = .allocate(capacity: n / 32 + padded)
        sumsByBlock = .allocate(capacity: n / 32 + padded)
    }

    deinit {
        floats.deallocate()
        quants.deallocate()
        pairs.deallocate()
        scales.deallocate()
        sums.deallocate()
        blockSums.deallocate()
        scalesByBlock.deallocate()
        sumsByBlock.deallocate()
    }

    /// Row `r` of the prepared activations.
    @inline(__always)
    @inlinable
    public func row(_ r: Int) -> ActivationRow {
        ActivationRow(floats: floats, quants: quants, pairs: pairs, scales: scales, sums: sums, blockSums: blockSums)
            .advanced(rows: r, columns: columns)
    }

    /// Converts `rows` rows of `columns` floats (row stride `stride`) into `format` with `kernels`' build of
    /// `prepareActivationRow`. The caller guarantees the sizes fit the capacity and that `columns` is a multiple of
    /// the format's block size.
    public func prepare(
        _ x: UnsafePointer<Float>, rows: Int, columns: Int, stride: Int, format: ActivationFormat, threads: Int = 1,
        kernels: any KernelSet = BuiltKernels()
    ) {
        precondition(rows <= capacityRows && columns <= capacityColumns, "activation buffer too small")
        self.format = format
        self.rows = rows
        self.columns = columns
        paddedRows = (rows + 7) / 8 * 8
        let byBlock = format == .q8_0 || format == .q8_1
        let blocks = columns / 32
        parallelChunks(rows, threads: rows >= 16 ? threads : 1) { range in
            for r in range {
                let out = row(r)
                kernels.prepareActivationRow(
                    x + r * stride, count: columns, into: out, format: format.forRow(r, of: rows))
                if byBlock {
                    for b in 0..<blocks {
                        scalesByBlock[b * paddedRows + r] = out.scales[b]
                        sumsByBlock[b * paddedRows + r] = format == .q8_1 ? out.sums[b] : 0
                    }
                }
            }
        }
        if byBlock {
            for r in rows..<paddedRows {
                (quants + r * columns).update(repeating: 0, count: columns)
                for b in 0..<blocks {
                    scalesByBlock[b * paddedRows + r] = 0
                    sumsByBlock[b * paddedRows + r] = 0
                }
            }
        }
    }
}

/// One row of `count` floats converted into `format` (see `QuantizedActivations`). `build` is the calling kernel
/// build's type, so that the out-of-line copies are that build's (as for `multiplyRows`).
@inline(__always)
@inlinable
public func prepareActivationRow<Build>(
    _ source: UnsafePointer<Float>, count columns: Int, into out: ActivationRow, format: ActivationFormat,
    build: Build.Type
) {
    switch format {
    case .f32: out.floats.update(from: source, count: columns)
    case .f16:
        for i in 0..<columns { out.floats[i] = roundToHalf(source[i]) }
        interleaveForHalves(out.floats, count: columns)
    case .bf16:
        for i in 0..<columns { out.floats[i] = bfloat16ToFloat(floatToBFloat16(source[i])) }
        interleaveForHalves(out.floats, count: columns)
    case .q8_0: quantizeRowQ8_0(source, count: columns, into: out, withSums: false)
    case .q8_1: quantizeRowQ8_0(source, count: columns, into: out, withSums: true)
    case .q8_K: quantizeRowQ8_K(source, count: columns, into: out, positiveTies: false)
    case .q8_KRepacked: quantizeRowQ8_K(source, count: columns, into: out, positiveTies: true)
    }
}

/// Rounds half to even, as `_mm256_round_ps(…, _MM_ROUND_NEAREST)` and ggml's `nearest_int` do.
@inline(__always)
@inlinable
func roundToNearestEven(_ x: Float) -> Int32 {
    Int32((x + 12_582_912) - 12_582_912)  // 1.5 · 2²³: valid for |x| < 2²²
}

/// Q8_0/Q8_1 quantization of `count` floats as ggml's x86 CPU backend does it: per 32 values `d = max|x| / 127`,
/// quants `round(x · 127/max|x|)` (ties to even), the scale stored as a half; with `withSums` also
/// `s = half(d · Σ quants)` for Q8_1.
@inline(__always)
@inlinable
public func quantizeRowQ8_0(_ x: UnsafePointer<Float>, count: Int, into out: ActivationRow, withSums: Bool) {
    for b in 0..<count / 32 {
        let v = x + b * 32
        let (d, id) = q8_0Scale(v)
        var sum: Int32 = 0
        let q = out.quants + b * 32
        let p = out.pairs + b * 32
        for i in 0..<32 {
            let value = roundToNearestEven(v[i] * id)
            q[i] = Int8(truncatingIfNeeded: value)
            p[(i & 1) * 16 + i / 2] = Int16(truncatingIfNeeded: value)
            sum &+= value
        }
        out.scales[b] = roundToHalf(d)
        if withSums { out.sums[b] = roundToHalf(d * Float(sum)) }
    }
}

/// The scale `d = max|x| / 127` of the 32 floats at `v` and the factor `id = 127 / max|x|` (0 for a zero block) the
/// quants are `round(x · id)` with, as ggml's x86 `quantize_row_q8_0` computes them.
@inline(__always)
@inlinable
func q8_0Scale(_ v: UnsafePointer<Float>) -> (d: Float, id: Float) {
    var maxAbs: Float = 0
    for i in 0..<32 { maxAbs = max(maxAbs, abs(v[i])) }
    return (maxAbs / 127, maxAbs != 0 ? 127 / maxAbs : 0)
}

/// The largest magnitude of the 256 floats at `v` and the first value that has it (ggml's scalar loop: `|v[i]| > amax`
/// takes a new maximum, so NaNs are passed over and the first of equal magnitudes stays), eight lanes at a time.
@inline(__always)
@inlinable
public func largestMagnitude256(_ v: UnsafePointer<Float>) -> (amax: Float, value: Float) {
    let raw = UnsafeRawPointer(v)
    @inline(__always) func magnitudes(_ i: Int) -> SIMD8<Float> {
        let bits = raw.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<UInt32>.self)
        return unsafeBitCast(bits & 0x7FFF_FFFF, to: SIMD8<Float>.self)
    }
    // Four independent chains of eight lanes; a lane only takes a greater value, so NaNs are passed over.
    @inline(__always) func larger(_ m: SIMD8<Float>, _ a: SIMD8<Float>) -> SIMD8<Float> {
        m.replacing(with: a, where: a .> m)
    }
    var l0 = SIMD8<Float>(repeating: 0)
    var l1 = l0
    var l2 = l0
    var l3 = l0
    for i in stride(from: 0, to: 256, by: 32) {
        l0 = larger(l0, magnitudes(i))
        l1 = larger(l1, magnitudes(i + 8))
        l2 = larger(l2, magnitudes(i + 16))
        l3 = larger(l3, magnitudes(i + 24))
    }
    let amax = larger(larger(l0, l1), larger(l2, l3)).max()
    guard amax > 0 else { return (0, 0) }
    var i = 0
    while i < 248 && !any(magnitudes(i) .== SIMD8(repeating: amax)) { i += 8 }
    while abs(v[i]) != amax && i < 255 { i += 1 }
    return (amax, v[i])
}

/// Q8_K quantization (ggml's `quantize_row_q8_K_ref`): per 256 values the scale is −max/127 of the value with the
/// largest magnitude (the first such value; with `positiveTies`, a positive one where both signs occur, as
/// ggml_quantize_mat_q8_K_4x8 picks it), quants rounded ties-to-even and clamped to 127, plus 16 sums of 16 quants.
/// `largest` finds a block's largest magnitude (`largestMagnitude256`) and `sixteen` quantizes sixteen values with
/// the inverse scale, returning their sum (`quantizeSixteenQ8_K`); the x86 builds pass vector code that computes
/// the same.
@inline(__always)
@inlinable
public func quantizeRowQ8_K(
    _ x: UnsafePointer<Float>, count: Int, into out: ActivationRow, positiveTies: Bool,
    largest findLargest: (UnsafePointer<Float>) -> (amax: Float, value: Float) = largestMagnitude256,
    sixteen: (UnsafePointer<Float>, Float, UnsafeMutablePointer<Int8>) -> Int32 = quantizeSixteenQ8_K
) {
    for b in 0..<count / 256 {
        let v = x + b * 256
        let q = out.quants + b * 256
        let (amax, largest) = findLargest(v)
        var maxValue = largest
        if positiveTies && maxValue < 0 && (0..<256).contains(where: { v[$0] == amax }) { maxValue = amax }
        if amax == 0 {
            out.scales[b] = 0
            for i in 0..<256 { q[i] = 0 }
            for j in 0..<16 { out.blockSums[b * 16 + j] = 0 }
            continue
        }
        let iscale = -127 / maxValue
        for j in 0..<16 { out.blockSums[b * 16 + j] = sixteen(v + 16 * j, iscale, q + 16 * j) }
        out.scales[b] = 1 / iscale
    }
}

/// Sixteen Q8_K quants of the floats at `v`: `min(127, round(iscale · v))`, ties to even, into `q`; returns their
/// sum. The sum comes from the values as computed (reading the quants back just after storing them stalls on store
/// forwarding); every value is within ±128, so it is the sum of the stored bytes.
@inline(__always)
@inlinable
public func quantizeSixteenQ8_K(_ v: UnsafePointer<Float>, iscale: Float, into q: UnsafeMutablePointer<Int8>) -> Int32 {
    var s: Int32 = 0
    for i in 0..<16 {
        let value = min(127, roundToNearestEven(iscale * v[i]))
        q[i] = Int8(truncatingIfNeeded: value)
        s &+= value
    }
    return s
}
