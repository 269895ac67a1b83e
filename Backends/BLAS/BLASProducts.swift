import Foundation
import GGUF
import PureSwiftBackend

/// The BLAS engine's matrix products: the pure-Swift runner hands over every projection of a batch of at least
/// `minimumBatch` rows, and this computes it with `cblas_sgemm` on F32 weights.
///
/// The work is split over the engine's own workers (`parallelChunks`), each taking a contiguous share of the weight
/// rows: it dequantizes its rows to F32 (into one buffer reused by every matrix, or, with `cacheWeights`, into a copy
/// per matrix kept for the session so each is dequantized once; F32 weights are read in place) and multiplies them
/// with a single-threaded `sgemm` while they are in its cache. The library's own threads are set to one: its thread
/// pool spinning next to the engine's workers would only take turns with them on the same cores.
///
/// The activations are rounded as the pure-Swift kernels round them (`RoundedActivations`), so each product equals
/// the kernels' up to the order of float additions; for Q4_1 a second `sgemm`, 32 times smaller, adds the kernels'
/// half-precision rounding of the block sums. `cblas_sgemv` takes single rows (`minimumBatch` 1).
// @unchecked Sendable: scratch and the weight cache behind `lock`
final class BLASProducts: BatchedProducts, @unchecked Sendable {
    let library: BLASLibrary
    let threads: Int
    let minimumBatch: Int
    let cacheWeights: Bool

    /// Serialises products (one session runs one batch at a time; this keeps the buffers safe regardless).
    private let lock = NSLock()
    /// Scratch mode: `scratchCapacity` floats, the largest matrix (with its Q4_1 offsets) dequantized so far.
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchCapacity = 0
    /// Cache mode: F32 copies by the address of the quantized data.
    private var cache: [UnsafeRawPointer: DequantizedWeights] = [:]
    private var cachedFloats = 0
    private let activations: RoundedActivations

    init(library: BLASLibrary, threads: Int, minimumBatch: Int, cacheWeights: Bool, kernels: any KernelSet) {
        self.library = library
        self.threads = max(1, threads)
        self.minimumBatch = max(1, minimumBatch)
        self.cacheWeights = cacheWeights
        activations = RoundedActivations(kernels: kernels)
        warmUp(library)
    }

    deinit {
        scratch?.deallocate()
        for weights in cache.values { weights.deallocate() }
    }

    func multiply(_ w: WeightMatrix, _ x: UnsafePointer<Float>, rows: Int, out: UnsafeMutablePointer<Float>) -> Bool {
        guard rows > 0, w.columns % w.activationFormat.blockSize == 0, fitsInt32(rows, w.rows, w.columns) else {
            return false
        }
        lock.lock()
        defer { lock.unlock() }
        let input = activations.round(x, rows: rows, columns: w.columns, format: w.activationFormat, threads: threads)
        let (weights, ready) = f32Weights(w)
        library.useThreads(1)
        let library = self.library
        let workers = rows * w.rows * w.columns < 1 << 18 ? 1 : threads
        parallelChunks(w.rows, threads: workers) { share in
            if !ready { dequantize(w, rows: share, into: weights) }
            multiplyShare(library, weights, input, rows: rows, share: share, matrixRows: w.rows, out: out)
        }
        return true
    }

    /// Where `w`'s floats go or are, and whether they are there already (F32 in place, or a cached copy).
    private func f32Weights(_ w: WeightMatrix) -> (DequantizedWeights, ready: Bool) {
        if w.type == .f32 {
            let values = UnsafeMutablePointer(mutating: w.base.assumingMemoryBound(to: Float.self))
            return (DequantizedWeights(values: values, offsets: nil, columns: w.columns), true)
        }
        if let cached = cache[w.base] { return (cached, true) }
        let count = w.rows * w.columns
        let offsetCount = w.type == .q4_1 ? w.rows * (w.columns / 32) : 0
        guard cacheWeights else {
            let buffer = scratchBuffer(floats: count + offsetCount)
            return (
                DequantizedWeights(
                    values: buffer, offsets: offsetCount > 0 ? buffer + count : nil, columns: w.columns), false
            )
        }
        let copy = DequantizedWeights(
            values: .allocate(capacity: count), offsets: offsetCount > 0 ? .allocate(capacity: offsetCount) : nil,
            columns: w.columns)
        cache[w.base] = copy  // filled by the caller before anyone reads it (under `lock`)
        cachedFloats += count + offsetCount
        return (copy, false)
    }

    /// The scratch, grown to hold at least `floats` values.
    private func scratchBuffer(floats: Int) -> UnsafeMutablePointer<Float> {
        if let scratch, floats <= scratchCapacity { return scratch }
        scratch?.deallocate()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: floats)
        scratch = buffer
        scratchCapacity = floats
        return buffer
    }
}

/// A matrix as `sgemm` reads it.
struct DequantizedWeights {
    /// `rows × columns` floats.
    var values: UnsafeMutablePointer<Float>
    /// Q4_1 only: each block's offset `m` (`rows × columns / 32`), for `RoundedActivations`' sum corrections.
    var offsets: UnsafeMutablePointer<Float>?
    var columns: Int

    /// Frees a cached copy.
    func deallocate() {
        values.deallocate()
        offsets?.deallocate()
    }
}

/// Rows `rows` of `w` as floats into `weights`, and for Q4_1 each block's offset `m`.
func dequantize(_ w: WeightMatrix, rows: Range<Int>, into weights: DequantizedWeights) {
    let columns = w.columns
    let blocks = columns / 32
    for r in rows {
        w.dequantizeRow(r, into: weights.values + r * columns)
        guard let offsets = weights.offsets else { continue }
        for b in 0..<blocks { offsets[r * blocks + b] = w.q4_1Offset(row: r, block: b) }
    }
}

/// `out[b, r] = Σc x̂[b, c] · W[r, c]` for the weight rows `share` and every activation row b (`out` has
/// `matrixRows` columns), plus the Q4_1 sum corrections.
func multiplyShare(
    _ library: BLASLibrary, _ weights: DequantizedWeights, _ input: RoundedActivations.Rounded, rows: Int,
    share: Range<Int>, matrixRows: Int, out: UnsafeMutablePointer<Float>
) {
    let m = Int32(rows)
    let n = Int32(share.count)
    let k = Int32(weights.columns)
    let ldc = Int32(matrixRows)
    let w = weights.values + share.lowerBound * weights.columns
    let blocks = Int32(weights.columns / 32)
    let offsets = weights.offsets.map { $0 + share.lowerBound * Int(blocks) }
    let target = out + share.lowerBound
    if rows == 1, let sgemv = library.sgemv {
        // target = W · x̂ (+ offsets · corrections)
        sgemv(CBLAS.rowMajor, CBLAS.noTranspose, n, k, 1, w, k, input.values, 1, 0, target, 1)
        if let corrections = input.sumCorrections, let offsets {
            sgemv(CBLAS.rowMajor, CBLAS.noTranspose, n, blocks, 1, offsets, blocks, corrections, 1, 1, target, 1)
        }
        return
    }
    // target (rows × share) = x̂ (rows × columns) · Wᵀ (columns × share)
    library.sgemm(
        CBLAS.rowMajor, CBLAS.noTranspose, CBLAS.transpose, m, n, k, 1, input.values, k, w, k, 0, target, ldc)
    if let corrections = input.sumCorrections, let offsets {
        // target += corrections (rows × blocks) · offsetsᵀ (blocks × share)
        library.sgemm(
            CBLAS.rowMajor, CBLAS.noTranspose, CBLAS.transpose, m, n, blocks, 1, corrections, blocks, offsets,
            blocks, 1, target, ldc)
    }
}

/// One tiny product on the calling thread, before the workers call the library concurrently: OpenBLAS sets up its
/// buffers and thread state on its first call, and two first calls at once (one per worker) corrupted the heap.
func warmUp(_ library: BLASLibrary) {
    library.useThreads(1)
    var a: [Float] = [1]
    var b: [Float] = [1]
    var c: [Float] = [0]
    library.sgemm(CBLAS.rowMajor, CBLAS.noTranspose, CBLAS.transpose, 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1)
    if let sgemv = library.sgemv { sgemv(CBLAS.rowMajor, CBLAS.noTranspose, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1) }
}

/// Whether every dimension fits CBLAS's 32-bit `int`.
func fitsInt32(_ values: Int...) -> Bool {
    values.allSatisfy { $0 <= Int(Int32.max) }
}
