import Foundation

// Unquantized F32 products for encoders (BERT): the weight matrix regrouped once, at load time, into panels of 16
// output columns with the inputs running down each panel, so that a register-blocked kernel multiplies six
// activation rows by one panel with broadcasts and fused multiply-adds (the layout BLAS libraries pack into). The
// row kernels of WeightMatrix.swift compute dot products instead, which suits one token at a time, not a batch.

/// A weight matrix `W` (`outputs × inputs`, PyTorch's `Linear` layout) with its bias, packed for `multiplyPackedF32`:
/// panel `p` holds, for every input `k`, the 16 weights `W[16p + j][k]` (j = 0…15), zero past `outputs`.
public final class PackedF32Matrix: @unchecked Sendable {  // @unchecked: written once in init, read-only after
    public let outputs: Int
    public let inputs: Int
    /// (panels, inputs, 16)
    public let panels: UnsafeMutablePointer<Float>
    /// (panels × 16) biases, zero where there is none.
    public let bias: UnsafeMutablePointer<Float>
    public var panelCount: Int { (outputs + 15) / 16 }

    /// Packs `parts` stacked on top of one another (Q, K and V as one matrix): each a row-major `rows × inputs`
    /// matrix and an optional `rows`-value bias. Returns nil when the memory cannot be had.
    public init?(inputs: Int, parts: [(weights: [Float], bias: [Float]?)]) {
        let outputs = parts.reduce(0) { $0 + $1.weights.count / max(1, inputs) }
        let panelCount = (outputs + 15) / 16
        guard let p = calloc(max(1, panelCount * 16 * inputs), 4), let b = calloc(max(1, panelCount * 16), 4) else {
            return nil
        }
        self.outputs = outputs
        self.inputs = inputs
        panels = p.bindMemory(to: Float.self, capacity: panelCount * 16 * inputs)
        bias = b.bindMemory(to: Float.self, capacity: panelCount * 16)
        var row = 0
        for part in parts {
            let rows = part.weights.count / max(1, inputs)
            for r in 0..<rows {
                let panel = panels + ((row + r) / 16) * 16 * inputs + (row + r) % 16
                for k in 0..<inputs { panel[k * 16] = part.weights[r * inputs + k] }
                if let pb = part.bias, r < pb.count { bias[row + r] = pb[r] }
            }
            row += rows
        }
    }

    /// Bytes the packed copy takes.
    public var byteCount: Int { (panelCount * 16 * inputs + panelCount * 16) * 4 }

    deinit {
        free(panels)
        free(bias)
    }
}

/// `out[m][n] = Σ_k a[m][k] · W[n][k] + bias[n]` for the activation rows in `blocks` (blocks of six rows of `a`,
/// `rows` rows in all, row stride `w.inputs`; `out` row stride `w.outputs`). Rows are taken 48 at a time, and each
/// group runs against every panel while it sits in cache. `build` is the calling kernel build's type, so that each
/// build gets its own specialization (see `multiplyRows`).
@inlinable
public func multiplyPackedF32Blocks<Build>(
    _ w: PackedF32Matrix, _ a: UnsafePointer<Float>, rows: Int, blocks: Range<Int>, out: UnsafeMutablePointer<Float>,
    build: Build.Type
) {
    var group = blocks.lowerBound
    while group < blocks.upperBound {
        let groupEnd = min(group + 8, blocks.upperBound)
        for p in 0..<w.panelCount {
            for block in group..<groupEnd {
                let first = block * 6
                multiplyPackedF32Panel(w, a, rows: first..<min(first + 6, rows), panel: p, out: out, build: build)
            }
        }
        group = groupEnd
    }
}

/// Up to six activation rows times one panel: six accumulators of 16 lanes, one broadcast and one panel load per
/// input.
@inline(__always)
@inlinable
func multiplyPackedF32Panel<Build>(
    _ w: PackedF32Matrix, _ a: UnsafePointer<Float>, rows: Range<Int>, panel p: Int, out: UnsafeMutablePointer<Float>,
    build: Build.Type
) {
    let k = w.inputs
    let panel = UnsafeRawPointer(w.panels + p * 16 * k)
    // Missing rows of a short block read the first row again and are not stored.
    let last = rows.upperBound - 1
    let r0 = a + rows.lowerBound * k
    let r1 = a + min(rows.lowerBound + 1, last) * k
    let r2 = a + min(rows.lowerBound + 2, last) * k
    let r3 = a + min(rows.lowerBound + 3, last) * k
    let r4 = a + min(rows.lowerBound + 4, last) * k
    let r5 = a + min(rows.lowerBound + 5, last) * k
    let bias = UnsafeRawPointer(w.bias + p * 16).loadUnaligned(as: SIMD16<Float>.self)
    var c0 = bias
    var c1 = bias
    var c2 = bias
    var c3 = bias
    var c4 = bias
    var c5 = bias
    for i in 0..<k {
        let b = panel.loadUnaligned(fromByteOffset: i * 64, as: SIMD16<Float>.self)
        c0 = c0.addingProduct(SIMD16(repeating: r0[i]), b)
        c1 = c1.addingProduct(SIMD16(repeating: r1[i]), b)
        c2 = c2.addingProduct(SIMD16(repeating: r2[i]), b)
        c3 = c3.addingProduct(SIMD16(repeating: r3[i]), b)
        c4 = c4.addingProduct(SIMD16(repeating: r4[i]), b)
        c5 = c5.addingProduct(SIMD16(repeating: r5[i]), b)
    }
    let n = w.outputs
    let width = min(16, n - p * 16)
    @inline(__always) func store(_ c: SIMD16<Float>, _ j: Int) {
        guard j < rows.count else { return }
        let o = out + (rows.lowerBound + j) * n + p * 16
        if width == 16 {
            UnsafeMutableRawPointer(o).storeBytes(of: c, as: SIMD16<Float>.self)
        } else {
            for l in 0..<width { o[l] = c[l] }
        }
    }
    store(c0, 0)
    store(c1, 1)
    store(c2, 2)
    store(c3, 3)
    store(c4, 4)
    store(c5, 5)
}

/// `multiplyPackedF32Blocks` over all `rows` rows, the blocks of six rows split over `threads` workers.
public func matmulPackedF32(
    _ w: PackedF32Matrix, _ a: UnsafePointer<Float>, rows: Int, out: UnsafeMutablePointer<Float>, threads: Int,
    kernels: any KernelSet
) {
    let blocks = (rows + 5) / 6
    let workers = rows * w.inputs * w.outputs < 1 << 15 ? 1 : threads
    parallelChunks(blocks, threads: workers) { range in
        kernels.multiplyPackedF32(w, a, rows: rows, blocks: range, out: out)
    }
}
