import GGUF
import PureSwiftKernels

/// A linear layer's weights: `y = W · x (+ b)`, the matrix memory-mapped (or repacked) and an optional F32 bias.
struct Projection {
    let weight: WeightMatrix
    /// `weight.rows` values, or nil.
    let bias: UnsafePointer<Float>?

    /// Output values per input row.
    var outputs: Int { weight.rows }
}

extension TensorLoader {
    /// `<name>.weight` as a matrix of `rows × columns` (through `packed`, which may regroup it for the kernels) and
    /// `<name>.bias` when the file has it.
    func projection(_ name: String, rows: Int, columns: Int, packed: RepackedWeights) throws -> Projection {
        Projection(
            weight: try packed.prepare(matrix(name + ".weight", rows: rows, columns: columns)),
            bias: try optionalVector(name + ".bias", count: rows))
    }
}

/// Runs projections of a batch of activation rows: the engine's integer kernels on activations prepared in the
/// format each matrix reads, or, for batches of at least `batchedProducts.minimumBatch` rows, the outside library's
/// products (the BLAS engine). One per runner; it owns the prepared-activation buffer.
final class Projector {
    let threads: Int
    let kernels: any KernelSet
    let batchedProducts: (any BatchedProducts)?
    /// (batch, widest input) prepared activations.
    let activations: QuantizedActivations

    /// A projector for batches of up to `rows` rows of at most `columns` inputs.
    init(rows: Int, columns: Int, threads: Int, kernels: any KernelSet, batchedProducts: (any BatchedProducts)?) {
        self.threads = max(1, threads)
        self.kernels = kernels
        self.batchedProducts = batchedProducts
        activations = QuantizedActivations(rows: rows, columns: columns)
    }

    /// `out = W · input (+ b)` for `rows` rows of `input` (row stride `W.columns`; `out` row stride `W.rows`),
    /// preparing the activations in the format W reads unless `prepared` says they already are.
    func project(
        _ p: Projection, _ input: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>,
        prepared: inout ActivationFormat?
    ) {
        let w = p.weight
        if let batchedProducts, rows >= batchedProducts.minimumBatch,
            batchedProducts.multiply(w, input, rows: rows, out: out)
        {
            addBias(p.bias, to: out, rows: rows, count: w.rows)
            return
        }
        if prepared != w.activationFormat {
            activations.prepare(
                input, rows: rows, columns: w.columns, stride: w.columns, format: w.activationFormat, threads: threads,
                kernels: kernels)
            prepared = w.activationFormat
        }
        matmul(w, activations, out: out, outStride: w.rows, threads: threads, kernels: kernels)
        addBias(p.bias, to: out, rows: rows, count: w.rows)
    }

    /// `project` of input that no other projection shares.
    func project(_ p: Projection, _ input: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>) {
        var prepared: ActivationFormat? = nil
        project(p, input, rows: rows, into: out, prepared: &prepared)
    }

    /// Two or three projections of the same input (Q, K and V; gate and up): one activation preparation and one
    /// parallel pass when the matrices read the same activation format, one by one otherwise.
    func projectGroup(
        _ first: (Projection, UnsafeMutablePointer<Float>), _ second: (Projection, UnsafeMutablePointer<Float>),
        _ third: (Projection, UnsafeMutablePointer<Float>)?, _ input: UnsafePointer<Float>, rows: Int
    ) {
        let format = first.0.weight.activationFormat
        let handedOver = batchedProducts.map { rows >= $0.minimumBatch } ?? false
        guard !handedOver, second.0.weight.activationFormat == format,
            third.map({ $0.0.weight.activationFormat == format }) ?? true
        else {
            var prepared: ActivationFormat? = nil
            project(first.0, input, rows: rows, into: first.1, prepared: &prepared)
            project(second.0, input, rows: rows, into: second.1, prepared: &prepared)
            if let third { project(third.0, input, rows: rows, into: third.1, prepared: &prepared) }
            return
        }
        activations.prepare(
            input, rows: rows, columns: first.0.weight.columns, stride: first.0.weight.columns, format: format,
            threads: threads, kernels: kernels)
        matmul(
            (first.0.weight, first.1), (second.0.weight, second.1), third.map { ($0.0.weight, $0.1) },
            activations: activations, threads: threads, kernels: kernels)
        addBias(first.0.bias, to: first.1, rows: rows, count: first.0.outputs)
        addBias(second.0.bias, to: second.1, rows: rows, count: second.0.outputs)
        if let third { addBias(third.0.bias, to: third.1, rows: rows, count: third.0.outputs) }
    }

    /// The logits: `out` (row stride `w.rows`, the vocabulary) `= W · input` for `rows` rows, always on the
    /// engine's own kernels (the vocabulary-sized product is not handed to `batchedProducts`).
    func logits(_ w: WeightMatrix, _ input: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>) {
        activations.prepare(
            input, rows: rows, columns: w.columns, stride: w.columns, format: w.activationFormat, threads: threads,
            kernels: kernels)
        matmul(w, activations, out: out, outStride: w.rows, threads: threads, kernels: kernels)
    }
}

/// Adds `bias` (when there is one) to each of `rows` rows of `count` values.
func addBias(_ bias: UnsafePointer<Float>?, to out: UnsafeMutablePointer<Float>, rows: Int, count: Int) {
    guard let bias else { return }
    for r in 0..<rows {
        let o = out + r * count
        for i in 0..<count { o[i] += bias[i] }
    }
}

/// `x[i] += y[i]` for `count` values: a residual connection.
func addResidual(_ y: UnsafePointer<Float>, to x: UnsafeMutablePointer<Float>, count: Int) {
    for i in 0..<count { x[i] += y[i] }
}
