import GGUF

/// A weight matrix read in place from the memory-mapped GGUF file: `rows` rows of `columns` values in one ggml
/// type. Nothing is copied or converted at load time; products run on the quantized bytes.
public struct WeightMatrix: @unchecked Sendable {
    /// The weight types the engine can multiply with, in ggml's order.
    public static let supportedTypes: [GGMLType] = [.f32, .f16, .q4_0, .q4_1, .q5_0, .q8_0, .q4_K, .q6_K, .bf16]

    public let name: String
    public let type: GGMLType
    public let rows: Int
    public let columns: Int
    public let rowBytes: Int
    public let base: UnsafeRawPointer

    /// The tensor `info` of `file` as a matrix. Throws `PureSwiftError.unsupportedTensorType` for a type without
    /// kernels and `.badTensorShape` when a row is not a whole number of blocks.
    public init(file: GGUFFile, tensor info: GGUFTensorInfo) throws {
        guard Self.supportedTypes.contains(info.type) else {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: info.name, type: info.type.description,
                supported: Self.supportedTypes.map(\.description))
        }
        guard info.rowLength % info.type.blockSize == 0, info.dimensions.count <= 2 else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: info.name, expected: "a 2-D matrix whose rows hold whole \(info.type) blocks",
                found: info.dimensions)
        }
        name = info.name
        type = info.type
        rows = info.rowCount
        columns = info.rowLength
        rowBytes = info.rowBytes
        base = file.data(of: info)
    }

    /// The activation format this type's dot product reads.
    public var activationFormat: ActivationFormat {
        switch type {
        case .f16: return .f16
        case .bf16: return .bf16
        case .q4_0, .q5_0, .q8_0: return .q8_0
        case .q4_1: return .q8_1
        case .q4_K, .q6_K: return .q8_K
        default: return .f32
        }
    }

    /// Bytes of row `r`.
    @inline(__always)
    public func row(_ r: Int) -> UnsafeRawPointer { base + r * rowBytes }

    /// Row `r` as floats (an embedding lookup).
    public func dequantizeRow(_ r: Int, into out: UnsafeMutablePointer<Float>) {
        let p = row(r)
        switch type {
        case .f32: dequantizeRowF32(p, out, count: columns)
        case .f16: dequantizeRowF16(p, out, count: columns)
        case .bf16: dequantizeRowBF16(p, out, count: columns)
        case .q4_0: dequantizeRowQ4_0(p, out, count: columns)
        case .q4_1: dequantizeRowQ4_1(p, out, count: columns)
        case .q5_0: dequantizeRowQ5_0(p, out, count: columns)
        case .q8_0: dequantizeRowQ8_0(p, out, count: columns)
        case .q4_K: dequantizeRowQ4_K(p, out, count: columns)
        case .q6_K: dequantizeRowQ6_K(p, out, count: columns)
        default: for i in 0..<columns { out[i] = 0 }  // unreachable: the initializer refuses other types
        }
    }

    /// Row `r` · activation row `a`.
    @inline(__always)
    public func dot(_ r: Int, _ a: ActivationRow) -> Float {
        let p = row(r)
        switch type {
        case .q4_1: return dotQ4_1(p, a, count: columns)
        case .q8_0: return dotQ8_0(p, a, count: columns)
        case .q4_0: return dotQ4_0(p, a, count: columns)
        case .q5_0: return dotQ5_0(p, a, count: columns)
        case .q4_K: return dotQ4_K(p, a, count: columns)
        case .q6_K: return dotQ6_K(p, a, count: columns)
        case .f16: return dotF16(p, a, count: columns)
        case .bf16: return dotBF16(p, a, count: columns)
        case .f32: return dotF32(p, a, count: columns)
        default: return 0
        }
    }

    /// Row `r` · activation row `a`, rounded exactly as llama.cpp's x86 kernels round (see LlamaCppExact.swift)
    /// for the types that have such a kernel; the plain `dot` for the others.
    @inline(__always)
    public func dotExact(_ r: Int, _ a: ActivationRow) -> Float {
        switch type {
        case .q4_1: return dotQ4_1Exact(row(r), a, count: columns)
        case .q8_0: return dotQ8_0Exact(row(r), a, count: columns)
        default: return dot(r, a)
        }
    }

    /// Row `r` · four activation rows (the row is unpacked once where the type has a four-column kernel).
    @inline(__always)
    public func dot4(_ r: Int, _ a0: ActivationRow, _ a1: ActivationRow, _ a2: ActivationRow, _ a3: ActivationRow)
        -> SIMD4<Float>
    {
        let p = row(r)
        switch type {
        case .q4_1: return dot4Q4_1(p, a0, a1, a2, a3, count: columns)
        case .q8_0: return dot4Q8_0(p, a0, a1, a2, a3, count: columns)
        case .q4_0: return dot4Q4_0(p, a0, a1, a2, a3, count: columns)
        case .q5_0: return dot4Q5_0(p, a0, a1, a2, a3, count: columns)
        default: return SIMD4(dot(r, a0), dot(r, a1), dot(r, a2), dot(r, a3))
        }
    }
}

/// `out[b · outStride + r] = W[r] · x[b]` for every row r of `w` and every prepared activation row b.
///
/// Rows are split over `threads` workers. Each worker takes its rows in tiles of eight and runs every activation
/// row (four at a time) against a tile while it sits in cache, so the weights stream from memory once per call
/// whatever the batch size. With `exact`, every product is rounded as llama.cpp rounds it (`dotExact`).
public func matmul(
    _ w: WeightMatrix, _ x: QuantizedActivations, out: UnsafeMutablePointer<Float>, outStride: Int, threads: Int,
    exact: Bool = false
) {
    let batch = x.rows
    if exact {
        let workers = w.rows * w.columns * batch < 1 << 15 ? 1 : threads
        parallelChunks(w.rows, threads: workers) { rows in
            for b in 0..<batch {
                let a = x.row(b)
                for r in rows { out[b * outStride + r] = w.dotExact(r, a) }
            }
        }
        return
    }
    // Small products run on the calling thread: the dispatch would cost more than the work.
    let workers = w.rows * w.columns * batch < 1 << 16 ? 1 : threads
    parallelChunks(w.rows, threads: workers) { rows in
        var tileStart = rows.lowerBound
        while tileStart < rows.upperBound {
            let tile = tileStart..<min(tileStart + 8, rows.upperBound)
            var b = 0
            while b + 4 <= batch {
                let a0 = x.row(b)
                let a1 = x.row(b + 1)
                let a2 = x.row(b + 2)
                let a3 = x.row(b + 3)
                for r in tile {
                    let v = w.dot4(r, a0, a1, a2, a3)
                    out[b * outStride + r] = v[0]
                    out[(b + 1) * outStride + r] = v[1]
                    out[(b + 2) * outStride + r] = v[2]
                    out[(b + 3) * outStride + r] = v[3]
                }
                b += 4
            }
            while b < batch {
                let a = x.row(b)
                for r in tile { out[b * outStride + r] = w.dot(r, a) }
                b += 1
            }
            tileStart = tile.upperBound
        }
    }
}
