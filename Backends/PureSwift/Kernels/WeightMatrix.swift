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
    /// The weight types the engine can multiply with, in ggml's order.
    public static let supportedTypes: [GGMLType] = [.f32, .f16, .q4_0, .q4_1, .q5_0, .q8_0, .q4_K, .q6_K, .bf16]

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

    /// The activation format this type's dot product reads.
    public var activationFormat: ActivationFormat {
        switch type {
        case .f16: return .f16
        case .bf16: return .bf16
        case .q4_0, .q5_0, .q8_0: return .q8_0
        case .q4_1: return .q8_1
        case .q4_K: return .q8_KRepacked
        case .q6_K: return .q8_K
        default: return .f32
        }
    }

    /// Bytes of row `r`.
    @inline(__always)
    @inlinable
    public func row(_ r: Int) -> UnsafeRawPointer { base + r * rowBytes }

    /// Row `r` as floats (an embedding lookup).
    @inlinable
    public func dequantizeRow(_ r: Int, into out: UnsafeMutablePointer<Float>) {
        let p = row(r)
        switch type {
        case .f32: dequantizeRowF32(p, out, count: columns)
        case .f16: dequantizeRowF16(p, out, count: columns)
        case .bf16: dequantizeRowBF16(p, out, count: columns)
        case .q4_0: dequantizeRowQ4_0(p, out, count: columns)
        case .q4_1 where layout == .q4_1Paired: dequantizeRowQ4_1Paired(p, out, count: columns)
        case .q4_1: dequantizeRowQ4_1(p, out, count: columns)
        case .q5_0: dequantizeRowQ5_0(p, out, count: columns)
        case .q8_0: dequantizeRowQ8_0(p, out, count: columns)
        case .q4_K: dequantizeRowQ4_K(p, out, count: columns)
        case .q6_K: dequantizeRowQ6_K(p, out, count: columns)
        default: for i in 0..<columns { out[i] = 0 }  // unreachable: the initializer refuses other types
        }
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

/// The dot products of one weight type: a row (its bytes) times one prepared activation row, and times four.
/// `multiplyRows` is generic over these so that each build of the kernels specializes its loop for every type,
/// in its own module (see KernelSet.swift).
public protocol RowKernel {
    static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float
    /// Four dot products: with `a` and the three activation rows after it, `rowStride` values apart.
    static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float>
}

extension RowKernel {
    /// Four single dot products, for types without a kernel that unpacks a row once for four activation rows.
    @inline(__always)
    @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        SIMD4(
            dot(row, a, count: count), dot(row, a.advanced(rows: 1, columns: rowStride), count: count),
            dot(row, a.advanced(rows: 2, columns: rowStride), count: count),
            dot(row, a.advanced(rows: 3, columns: rowStride), count: count))
    }
}

public enum Q4_1Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ4_1(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_1(row, a, rowStride: rowStride, count: count)
    }
}

public enum Q4_1PairedRows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ4_1Paired(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_1Paired(row, a, rowStride: rowStride, count: count)
    }
}

public enum Q8_0Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ8_0(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q8_0(row, a, rowStride: rowStride, count: count)
    }
}

public enum Q4_0Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ4_0(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_0(
            row, a, a.advanced(rows: 1, columns: rowStride), a.advanced(rows: 2, columns: rowStride),
            a.advanced(rows: 3, columns: rowStride), count: count)
    }
}

public enum Q5_0Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ5_0(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q5_0(row, a, rowStride: rowStride, count: count)
    }
}

public enum Q4_KRows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ4_K(row, a, count: count)
    }
    @inline(__always) @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_K(row, a, rowStride: rowStride, count: count)
    }
}

public enum Q6_KRows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ6_K(row, a, count: count)
    }
}

public enum Q6_KTiledRows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ6_KTiled(row, a, count: count)
    }
}

public enum F16Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotF16(row, a, count: count)
    }
}

public enum BF16Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotBF16(row, a, count: count)
    }
}

public enum F32Rows: RowKernel {
    @inline(__always) @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotF32(row, a, count: count)
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

/// The rows `rows` of `w` times every prepared activation row, on the calling thread (see `matmul`).
@inlinable
///
/// `build` is the calling kernel build's type (`BuiltKernels` of its module). It only tells the specializations of
/// this generic loop apart: specializations are emitted in the module that uses them under a name made of the
/// function and its type arguments, and the linker keeps one copy of each name — without the build among the type
/// arguments, the AVX2 build could end up running the portable build's copy.
public func multiplyRows<Build>(
    _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>, outStride: Int,
    build: Build.Type
) {
    switch w.type {
    case .q4_1 where w.layout == .q4_1Paired:
        multiplyRows(Q4_1PairedRows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q4_1: multiplyRows(Q4_1Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q8_0: multiplyRows(Q8_0Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q4_0: multiplyRows(Q4_0Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q5_0: multiplyRows(Q5_0Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q4_K: multiplyRows(Q4_KRows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q6_K where x.rows >= q6_KTiledMinimumBatch:
        multiplyRows(Q6_KTiledRows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .q6_K: multiplyRows(Q6_KRows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .f16: multiplyRows(F16Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .bf16: multiplyRows(BF16Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    case .f32: multiplyRows(F32Rows.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    default: break  // unreachable: WeightMatrix(file:tensor:) refuses other types
    }
}

/// `multiplyRows` for one weight type: rows in tiles of eight, each tile against the activation rows four at a
/// time, so a tile's bytes are unpacked once per four activation rows and stay in cache for all of them.
@inlinable
public func multiplyRows<K: RowKernel, Build>(
    _ kernel: K.Type, _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
    outStride: Int, build: Build.Type
) {
    let batch = x.rows
    let columns = w.columns
    var tileStart = rows.lowerBound
    while tileStart < rows.upperBound {
        let tile = tileStart..<min(tileStart + 8, rows.upperBound)
        var b = 0
        while b + 4 <= batch {
            let a = x.row(b)
            for r in tile {
                let v = K.dot4(w.row(r), a, rowStride: x.columns, count: columns)
                out[b * outStride + r] = v[0]
                out[(b + 1) * outStride + r] = v[1]
                out[(b + 2) * outStride + r] = v[2]
                out[(b + 3) * outStride + r] = v[3]
            }
            b += 4
        }
        while b < batch {
            let a = x.row(b)
            for r in tile { out[b * outStride + r] = K.dot(w.row(r), a, count: columns) }
            b += 1
        }
        tileStart = tile.upperBound
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
