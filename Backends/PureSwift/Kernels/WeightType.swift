import GGUF

// One weight type, one row: what the engine knows of a ggml type lives in the type's own file as a `WeightType`
// (its block size, the activation format its products read, how a row dequantizes, its row kernels), and
// `withWeightType` below is the one table from a matrix's ggml type to that description. Adding a type is its file
// and a row here; an ISA build that has faster kernels for it adds a case to its `BuiltKernels.multiplyRows`.

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

/// A weight type the engine multiplies with: its traits and its row kernels.
public protocol WeightType: RowKernel {
    /// Block size, block bytes and the activation format the dot products read.
    static var traits: WeightTraits { get }
    /// Dequantizes `count` (a multiple of `blockValues`) weights at `row` into `out`.
    static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int)
    /// Rows `rows` of `w` times every activation row of `x` (see `multiplyRows(_:_:_:rows:out:outStride:build:)`,
    /// which a type replaces only when its kernels depend on the batch).
    static func multiplyRows<Build>(
        _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int, build: Build.Type)
}

extension WeightType {
    @inline(__always)
    @inlinable
    public static func multiplyRows<Build>(
        _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int, build: Build.Type
    ) {
        PureSwiftKernels.multiplyRows(Self.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
    }
}

/// A weight type whose products llama.cpp rounds one way for small batches (the type's own `dot`) and another from
/// some batch on (`Batched`): the K-quants' tiled product (TiledKQuants.swift), tinyBLAS for unquantized weights.
public protocol BatchRoundedWeightType: WeightType {
    associatedtype Batched: RowKernel
    /// Whether a product with `rows` activation rows of `columns` values takes `Batched`.
    static func takesBatchedKernel(rows: Int, columns: Int) -> Bool
}

extension BatchRoundedWeightType {
    @inline(__always)
    @inlinable
    public static func multiplyRows<Build>(
        _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int, build: Build.Type
    ) {
        if takesBatchedKernel(rows: x.rows, columns: w.columns) {
            PureSwiftKernels.multiplyRows(Batched.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
        } else {
            PureSwiftKernels.multiplyRows(Self.self, w, x, rows: rows, out: out, outStride: outStride, build: build)
        }
    }
}

/// Work to do with a matrix's `WeightType` (`withWeightType`). A generic method rather than a closure, so that the
/// work is specialized for every type in whichever module (kernel build) calls it.
public protocol WeightTypeWork {
    associatedtype Result
    func callAsFunction<W: WeightType>(_ type: W.Type) -> Result
}

/// `work` done with the `WeightType` of matrices of `type` in `layout`, or nil for a type the engine has no
/// kernels for. The table of the weight types, in ggml's order.
@inlinable
public func withWeightType<Work: WeightTypeWork>(
    _ type: GGMLType, layout: WeightLayout = .ggml, _ work: Work
) -> Work.Result? {
    switch type {
    case .f32: return work(F32Rows.self)
    case .f16: return work(F16Rows.self)
    case .q4_0: return work(Q4_0Rows.self)
    case .q4_1 where layout == .q4_1Paired: return work(Q4_1PairedRows.self)
    case .q4_1: return work(Q4_1Rows.self)
    case .q5_0: return work(Q5_0Rows.self)
    case .q5_1: return work(Q5_1Rows.self)
    case .q8_0: return work(Q8_0Rows.self)
    case .q2_K: return work(Q2_KRows.self)
    case .q3_K: return work(Q3_KRows.self)
    case .q4_K: return work(Q4_KRows.self)
    case .q5_K: return work(Q5_KRows.self)
    case .q6_K: return work(Q6_KRows.self)
    case .iq4_NL: return work(IQ4_NLRows.self)
    case .iq4_XS: return work(IQ4_XSRows.self)
    case .bf16: return work(BF16Rows.self)
    default: return nil
    }
}

/// What the engine needs to know of a weight type's blocks.
public struct WeightTraits: Sendable, Equatable {
    /// Values per block (1 for the float formats).
    public var blockValues: Int
    /// Bytes per block.
    public var blockBytes: Int
    /// The activation format the dot products read.
    public var activationFormat: ActivationFormat

    @inlinable
    public init(blockValues: Int, blockBytes: Int, activationFormat: ActivationFormat) {
        (self.blockValues, self.blockBytes, self.activationFormat) = (blockValues, blockBytes, activationFormat)
    }

    /// The traits of `W` (`withWeightType(type, WeightTraits.Read())`).
    public struct Read: WeightTypeWork {
        public init() {}
        public func callAsFunction<W: WeightType>(_ type: W.Type) -> WeightTraits { W.traits }
    }
}

/// `multiplyRows` as work for `withWeightType`: generic over the calling build, so that every build specializes
/// the table and each type's loop for itself.
@usableFromInline
struct RowProducts<Build, X: ActivationRows>: WeightTypeWork {
    @usableFromInline let w: WeightMatrix
    @usableFromInline let x: X
    @usableFromInline let rows: Range<Int>
    @usableFromInline let out: UnsafeMutablePointer<Float>
    @usableFromInline let outStride: Int

    @inlinable
    init(w: WeightMatrix, x: X, rows: Range<Int>, out: UnsafeMutablePointer<Float>, outStride: Int) {
        (self.w, self.x, self.rows, self.out, self.outStride) = (w, x, rows, out, outStride)
    }

    @inline(__always)
    @inlinable
    func callAsFunction<W: WeightType>(_ type: W.Type) {
        W.multiplyRows(w, x, rows: rows, out: out, outStride: outStride, build: Build.self)
    }
}

/// The rows `rows` of `w` times every prepared activation row, on the calling thread (see `matmul`).
///
/// `build` is the calling kernel build's type (`BuiltKernels` of its module). It only tells the specializations of
/// this generic loop apart: specializations are emitted in the module that uses them under a name made of the
/// function and its type arguments, and the linker keeps one copy of each name — without the build among the type
/// arguments, the AVX2 build could end up running the portable build's copy.
@inlinable
public func multiplyRows<Build>(
    _ w: WeightMatrix, _ x: some ActivationRows, rows: Range<Int>, out: UnsafeMutablePointer<Float>, outStride: Int,
    build: Build.Type
) {
    // nil only for a type `WeightMatrix(file:tensor:)` refuses.
    _ = withWeightType(
        w.type, layout: w.layout, RowProducts<Build, _>(w: w, x: x, rows: rows, out: out, outStride: outStride))
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
