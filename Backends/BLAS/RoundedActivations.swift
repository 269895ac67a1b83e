import Foundation
import PureSwiftBackend

/// The activations of a product as the pure-Swift kernels see them, back in floats.
///
/// The pure-Swift kernels (and llama.cpp's) do not multiply quantized weights with the activations themselves: they
/// first round each activation row to the weight type's `ActivationFormat` (8-bit blocks with a half-precision scale
/// for Q4_0/Q4_1/Q5_0/Q8_0, 256-value blocks for the K-quants, halves for F16). Handing `sgemm` the unrounded floats
/// changes the products by up to about 1 % — enough to flip a close greedy pick. So the engine rounds the rows the
/// same way (`prepareActivationRow`, the kernels' own function) and expands them again (`scale × quant`): `sgemm`
/// then computes the same sums as the kernels, up to the order of float additions.
///
/// One caveat remains for Q4_1 weights, whose blocks carry an offset `m`: the kernels multiply it by the block's
/// activation sum rounded to half precision (`ActivationRow.sums`), the expanded floats by the exact sum.
/// `Rounded.sumCorrections` carries the difference, which `BLASProducts` multiplies with the offsets.
final class RoundedActivations {
    /// The result of `round`: pointers into the buffers, valid until the next call.
    struct Rounded {
        /// `rows × columns` floats.
        var values: UnsafePointer<Float>
        /// Q8_1 only: per row and 32-value block, the kernels' half-rounded sum minus the exact one.
        var sumCorrections: UnsafePointer<Float>?
    }

    /// The kernel build whose `prepareActivationRow` rounds (the session's; every build rounds alike).
    let kernels: any KernelSet
    /// Per worker, one row of prepared activations.
    private var scratchRows: [QuantizedActivations] = []
    private var scratchColumns = 0
    /// `rows × columns` expanded activations.
    private var expanded = FloatBuffer()
    /// `rows × columns / 32` sum corrections (Q8_1).
    private var corrections = FloatBuffer()
    /// A copy of the last input, to reuse its rounding when the next product reads the same values (Q, K and V;
    /// gate and up).
    private var lastInput = FloatBuffer()
    private var last: (rows: Int, columns: Int, format: ActivationFormat)?

    init(kernels: any KernelSet) {
        self.kernels = kernels
    }

    /// `rows` rows of `columns` floats rounded to `format` and expanded; `x` itself for `.f32`.
    func round(_ x: UnsafePointer<Float>, rows: Int, columns: Int, format: ActivationFormat, threads: Int) -> Rounded {
        if format == .f32 { return Rounded(values: x, sumCorrections: nil) }
        let count = rows * columns
        let blocks = columns / 32
        let sums = format == .q8_1 ? corrections.reserve(rows * blocks) : nil
        if let last, last == (rows, columns, format), let previous = expanded.pointer,
            let input = lastInput.pointer, memcmp(input, x, count * MemoryLayout<Float>.size) == 0
        {
            return Rounded(values: UnsafePointer(previous), sumCorrections: sums.map { UnsafePointer($0) })
        }
        let out = expanded.reserve(count)
        let scratch = scratchRows(min(threads, rows), columns: columns)
        let kernels = self.kernels
        parallelChunksIndexed(rows, threads: scratch.count) { worker, range in
            let prepared = scratch[worker].row(0)
            for r in range {
                expandRow(
                    x + r * columns, count: columns, format: format.forRow(r, of: rows), kernels: kernels,
                    prepared: prepared,
                    into: out + r * columns)
                if let sums { sumErrors(prepared, blocks: blocks, into: sums + r * blocks) }
            }
        }
        lastInput.reserve(count).update(from: x, count: count)
        last = (rows, columns, format)
        return Rounded(values: UnsafePointer(out), sumCorrections: sums.map { UnsafePointer($0) })
    }

    private func scratchRows(_ workers: Int, columns: Int) -> [QuantizedActivations] {
        if columns > scratchColumns {
            scratchRows = []
            scratchColumns = columns
        }
        while scratchRows.count < workers { scratchRows.append(QuantizedActivations(rows: 1, columns: scratchColumns)) }
        return Array(scratchRows.prefix(max(1, workers)))
    }
}

/// A growable float buffer (never shrinks; contents are not kept when it grows).
struct FloatBuffer: ~Copyable {
    private(set) var pointer: UnsafeMutablePointer<Float>?
    private var capacity = 0

    /// The buffer with room for at least `count` floats.
    mutating func reserve(_ count: Int) -> UnsafeMutablePointer<Float> {
        if let pointer, count <= capacity { return pointer }
        pointer?.deallocate()
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: max(1, count))
        pointer = buffer
        capacity = count
        return buffer
    }

    deinit { pointer?.deallocate() }
}

/// One row of `source` as the kernels see it, in floats: rounded to half or bfloat16 precision, or converted to the
/// block format with the kernels' `prepareActivationRow` (into `prepared`) and expanded as `scale × quant`.
func expandRow(
    _ source: UnsafePointer<Float>, count: Int, format: ActivationFormat, kernels: any KernelSet,
    prepared: ActivationRow, into out: UnsafeMutablePointer<Float>
) {
    switch format {
    case .f32:
        out.update(from: source, count: count)
    case .f16:
        for i in 0..<count { out[i] = roundToHalf(source[i]) }
    case .bf16:
        for i in 0..<count { out[i] = bfloat16ToFloat(floatToBFloat16(source[i])) }
    case .q8_0, .q8_1, .q8_K, .q8_KRepacked:
        kernels.prepareActivationRow(source, count: count, into: prepared, format: format)
        let block = format.blockSize
        for b in 0..<count / block {
            let scale = prepared.scales[b]
            let quants = prepared.quants + b * block
            let target = out + b * block
            for i in 0..<block { target[i] = scale * Float(quants[i]) }
        }
    }
}

/// Per 32-value block of a prepared Q8_1 row: the half-rounded `scale × Σ quants` the kernels use minus the exact
/// product the expanded floats sum to.
func sumErrors(_ prepared: ActivationRow, blocks: Int, into out: UnsafeMutablePointer<Float>) {
    for b in 0..<blocks {
        var sum: Int32 = 0
        for i in (b * 32)..<((b + 1) * 32) { sum &+= Int32(prepared.quants[i]) }
        out[b] = prepared.sums[b] - prepared.scales[b] * Float(sum)
    }
}
