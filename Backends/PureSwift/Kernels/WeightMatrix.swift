import GGUF

/// How a matrix's rows hold their blocks.
public enum WeightLayout: Sendable, Equatable {
    /// As in the GGUF file (ggml's block layout).
    case ggml
    /// Q4_1 regrouped at load time for the integer kernels (Q4_1Paired.swift).
    case q4_1Paired
}

/// A weight matrix: `rows` rows of `columns` values in one ggml type, read in place from the memory-mapped GGUF file
/// or (Q4_1, `layout` `.q4_1Paired`) from a copy regrouped at load time. Products run on the quantized bytes.
public struct WeightMatrix: @unchecked Sendable {  // @unchecked: a view of read-only mapped or repacked bytes
    /// The weight types the engine can multiply with (those in `withWeightType`'s table), in ggml's order.
    public static let supportedTypes: [GGMLType] = GGMLType.allCases.filter {
        withWeightType($0, WeightTraits.Read()) != nil
    }

    public let name: String
    public let type: GGMLType
    public let rows: Int
    public let columns: Int
    public let rowBytes: Int
    public let base: UnsafeRawPointer
    public let layout: WeightLayout

    /// A matrix of `rows` rows of `columns` values of `type` at `base`, rows `rowBytes` apart. The caller has checked
    /// that `type` is one of `supportedTypes` and the bytes are there (`WeightMatrix(file:tensor:)` in the engine),
    /// and for `.q4_1Paired` that the type is Q4_1 and `q4_1PairedLayoutFits(columns:)`.
    public init(
        name: String, type: GGMLType, rows: Int, columns: Int, rowBytes: Int, base: UnsafeRawPointer,
        layout: WeightLayout = .ggml
    ) {
        self.name = name
        self.type = type
        self.rows = rows
        self.columns = columns
        self.rowBytes = rowBytes
        self.base = base
        self.layout = layout
    }

    /// Whether `repackedQ4_1Paired(into:)` applies: a Q4_1 matrix in ggml's layout with an even number of blocks per row.
    public var canRepackQ4_1Paired: Bool {
        type == .q4_1 && layout == .ggml && q4_1PairedLayoutFits(columns: columns)
    }

    /// This matrix regrouped into the paired layout at `destination` (`rows × rowBytes` bytes), which the returned
    /// matrix reads.
    public func repackedQ4_1Paired(into destination: UnsafeMutableRawPointer) -> WeightMatrix {
        for r in 0..<rows { repackRowQ4_1Paired(row(r), destination + r * rowBytes, blocks: columns / 32) }
        return WeightMatrix(
            name: name, type: type, rows: rows, columns: columns, rowBytes: rowBytes, base: destination,
            layout: .q4_1Paired)
    }

    /// The offset m of block `block` of row `r` of a Q4_1 matrix.
    @inlinable
    public func q4_1Offset(row r: Int, block: Int) -> Float {
        layout == .q4_1Paired
            ? q4_1PairedOffset(row(r), block: block, blocks: columns / 32)
            : loadHalf(row(r), block * q4_1BlockBytes + 2)
    }

    /// The activation format this type's dot products read.
    public var activationFormat: ActivationFormat { traits.activationFormat }

    /// The traits of this matrix's weight type (the table: `withWeightType`).
    public var traits: WeightTraits {
        // The initializer's caller checked that the type is in the table.
        withWeightType(type, layout: layout, WeightTraits.Read())!
    }

    /// Bytes of row `r`.
    @inline(__always)
    @inlinable
    public func row(_ r: Int) -> UnsafeRawPointer { base + r * rowBytes }

    /// Row `r` as floats (an embedding lookup).
    @inlinable
    public func dequantizeRow(_ r: Int, into out: UnsafeMutablePointer<Float>) {
        _ = withWeightType(type, layout: layout, DequantizedRow(row: row(r), out: out, count: columns))
    }

    /// Row `r` · activation row `a` (a test and reference entry point; products go through `multiplyRows`).
    @inlinable
    public func dot(_ r: Int, _ a: ActivationRow) -> Float {
        var out: Float = 0
        let x = SingleActivationRow(a)
        withUnsafeMutablePointer(to: &out) {
            multiplyRows(self, x, rows: r..<(r + 1), out: $0 - r, outStride: 0, build: WeightMatrix.self)
        }
        return out
    }
}

/// `out[b · outStride + r] = W[r] · x[b]` for every row r of `w` and every prepared activation row b.
///
/// Rows are split over `threads` workers. Each worker takes its rows in tiles of eight and runs every activation
/// row (four at a time) against a tile while it sits in cache, so the weights stream from memory once per call
/// whatever the batch size. The row kernels are `kernels`' build (see KernelSet.swift).
public func matmul(
    _ w: WeightMatrix, _ x: QuantizedActivations, out: UnsafeMutablePointer<Float>, outStride: Int, threads: Int,
    kernels: any KernelSet
) {
    let workers = w.rows * w.columns * x.rows < 1 << 15 ? 1 : threads
    parallelPieces(
        w.rows, threads: workers, pieces: productPieces(rows: w.rows, batch: x.rows, threads: workers), granularity: 8
    ) {
        rows in
        kernels.multiplyRows(w, x, rows: rows, out: out, outStride: outStride)
    }
}

/// How many pieces a product of `rows` weight rows with `batch` activation rows is cut into (`parallelPieces`): a
/// generated token's in one per thread (its products take microseconds); a prompt's in up to eight per thread,
/// each at least 256 rows long, since each piece pays again for laying out the activations (the x86 kernels copy or
/// gather them group by group: 1–4 % of a piece of 256 rows).
@inline(__always)
func productPieces(rows: Int, batch: Int, threads: Int) -> Int {
    batch >= 16 ? max(threads, min(8 * threads, rows / 256)) : threads
}

/// Two or three products of the same prepared activations in one parallel pass (Q, K and V; gate and up), so the
/// workers are woken once instead of once per matrix. Each output has the row stride of its matrix.
public func matmul(
    _ products: (WeightMatrix, UnsafeMutablePointer<Float>), _ second: (WeightMatrix, UnsafeMutablePointer<Float>),
    _ third: (WeightMatrix, UnsafeMutablePointer<Float>)? = nil, activations x: QuantizedActivations, threads: Int,
    kernels: any KernelSet
) {
    let first = products
    let rowsA = first.0.rows
    let rowsB = second.0.rows
    let total = rowsA + rowsB + (third?.0.rows ?? 0)
    let workers = total * first.0.columns * x.rows < 1 << 15 ? 1 : threads
    parallelPieces(
        total, threads: workers, pieces: productPieces(rows: total, batch: x.rows, threads: workers), granularity: 8
    ) {
        rows in
        // The global row range, cut at the matrix boundaries.
        let a = rows.clamped(to: 0..<rowsA)
        if !a.isEmpty { kernels.multiplyRows(first.0, x, rows: a, out: first.1, outStride: first.0.rows) }
        let b = rows.clamped(to: rowsA..<(rowsA + rowsB))
        if !b.isEmpty {
            kernels.multiplyRows(
                second.0, x, rows: (b.lowerBound - rowsA)..<(b.upperBound - rowsA), out: second.1,
                outStride: second.0.rows)
        }
        if let third {
            let c = rows.clamped(to: (rowsA + rowsB)..<total)
            if !c.isEmpty {
                kernels.multiplyRows(
                    third.0, x, rows: (c.lowerBound - rowsA - rowsB)..<(c.upperBound - rowsA - rowsB), out: third.1,
                    outStride: third.0.rows)
            }
        }
    }
}

/// Prepared activation rows: a `QuantizedActivations` buffer, or one row on its own.
public protocol ActivationRows {
    var rows: Int { get }
    /// Values from one row to the next.
    var columns: Int { get }
    func row(_ r: Int) -> ActivationRow
}

extension QuantizedActivations: ActivationRows {}

/// One prepared row as `ActivationRows`.
public struct SingleActivationRow: ActivationRows {
    @usableFromInline let only: ActivationRow
    @inlinable public init(_ row: ActivationRow) { only = row }
    @inlinable public var rows: Int { 1 }
    @inlinable public var columns: Int { 0 }
    @inlinable public func row(_ r: Int) -> ActivationRow { only }
}

/// `dequantizeRow` as work for `withWeightType`.
@usableFromInline
struct DequantizedRow: WeightTypeWork {
    @usableFromInline let row: UnsafeRawPointer
    @usableFromInline let out: UnsafeMutablePointer<Float>
    @usableFromInline let count: Int

    @inlinable
    init(row: UnsafeRawPointer, out: UnsafeMutablePointer<Float>, count: Int) {
        (self.row, self.out, self.count) = (row, out, count)
    }

    @inlinable
    func callAsFunction<W: WeightType>(_ type: W.Type) { W.dequantizeRow(row, out, count: count) }
}
