// One build of the kernels' entry points (see KernelSet.swift). This file is compiled four times: in
// PureSwiftKernels (portable) and, through symbolic links, in PureSwiftKernelsAVX2, PureSwiftKernelsAVX512 and
// PureSwiftKernelsAVX512VNNI, whose targets set `SANAD_KERNEL_BUILD_*` and a `-target-cpu` (Package.swift; the
// VNNI build sets the AVX-512 build's flag too).

import GGUF

#if SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512
    import PureSwiftKernels
#endif

/// This module's build of the kernels.
public struct BuiltKernels: KernelSet {
    public init() {}

    #if SANAD_KERNEL_BUILD_AVX512VNNI
        public var name: String { "avx512vnni" }
    #elseif SANAD_KERNEL_BUILD_AVX512
        public var name: String { "avx512" }
    #elseif SANAD_KERNEL_BUILD_AVX2
        public var name: String { "avx2" }
    #else
        public var name: String { "portable" }
    #endif

    /// Vector registers this build's code can use: 32 with AVX-512, 16 otherwise (x86-64 AVX2; the portable build
    /// is compiled for the baseline).
    #if SANAD_KERNEL_BUILD_AVX512
        static var vectorRegisters: Int { 32 }
    #else
        static var vectorRegisters: Int { 16 }
    #endif

    public func multiplyRows(
        _ w: WeightMatrix, _ x: QuantizedActivations, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
        outStride: Int
    ) {
        #if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
            switch w.type {
            case .q4_1 where w.layout == .q4_1Paired:
                multiplyRowsQ4_1PairedX86(w, x, rows: rows, out: out, outStride: outStride)
                return
            case .q5_0:
                multiplyRowsSignedBlocksX86(Q5_0BlocksX86.self, w, x, rows: rows, out: out, outStride: outStride)
                return
            case .q8_0:
                multiplyRowsSignedBlocksX86(Q8_0BlocksX86.self, w, x, rows: rows, out: out, outStride: outStride)
                return
            case .q4_K:
                multiplyRowsQ4_KX86(w, x, rows: rows, out: out, outStride: outStride)
                return
            case .q6_K:
                multiplyRowsQ6_KX86(w, x, rows: rows, out: out, outStride: outStride)
                return
            default: break
            }
        #endif
        PureSwiftKernels.multiplyRows(w, x, rows: rows, out: out, outStride: outStride, build: BuiltKernels.self)
    }

    public func multiplyPackedF32(
        _ w: PackedF32Matrix, _ a: UnsafePointer<Float>, rows: Int, blocks: Range<Int>, out: UnsafeMutablePointer<Float>
    ) {
        multiplyPackedF32Blocks(w, a, rows: rows, blocks: blocks, out: out, build: BuiltKernels.self)
    }

    public func prepareActivationRow(
        _ source: UnsafePointer<Float>, count: Int, into out: ActivationRow, format: ActivationFormat
    ) {
        #if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
            switch format {
            case .q8_0, .q8_1:
                quantizeRowQ8_0X86(source, count: count, into: out, withSums: format == .q8_1)
                return
            case .q8_K, .q8_KRepacked:
                quantizeRowQ8_K(
                    source, count: count, into: out, positiveTies: format == .q8_KRepacked,
                    largest: largestMagnitude256X86, sixteen: quantizeSixteenQ8_KX86)
                return
            default: break
            }
        #endif
        PureSwiftKernels.prepareActivationRow(source, count: count, into: out, format: format, build: BuiltKernels.self)
    }

    public func attendHalfCacheVectorPath(
        query: UnsafePointer<Float>, keys: UnsafePointer<UInt16>, values: UnsafePointer<UInt16>, stride: Int,
        count: Int, dimensions: Int, scale: Float, softCap: Float, scratch: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>
    ) {
        PureSwiftKernels.attendHalfCacheVectorPath(
            query: query, keys: keys, values: values, stride: stride, count: count, dimensions: dimensions,
            scale: scale, softCap: softCap, scratch: scratch, out: out)
    }

    public func attendHalfCacheVectorPathHeads(
        queries: UnsafePointer<Float>, heads: Int, kvHeads: Int, keys: UnsafePointer<UInt16>,
        values: UnsafePointer<UInt16>, stride: Int, count: Int, dimensions: Int, scale: Float, softCap: Float,
        scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>?
    ) {
        PureSwiftKernels.attendHalfCacheVectorPathHeads(
            queries: queries, heads: heads, kvHeads: kvHeads, keys: keys, values: values, stride: stride,
            count: count, dimensions: dimensions, scale: scale, softCap: softCap, scratch: scratch, out: out)
    }

    public func attendCacheVectorPath(
        query: UnsafePointer<Float>, keys: UnsafeRawPointer, keyType: GGMLType, keyStride: Int,
        values: UnsafeRawPointer, valueType: GGMLType, valueStride: Int, count: Int, dimensions: Int, scale: Float,
        softCap: Float, scratch: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
    ) {
        PureSwiftKernels.attendCacheVectorPath(
            query: query, keys: keys, keyType: keyType, keyStride: keyStride, values: values, valueType: valueType,
            valueStride: valueStride, count: count, dimensions: dimensions, scale: scale, softCap: softCap,
            scratch: scratch, out: out)
    }

    public func attendFloatCacheTiled(
        _ queries: TiledQueries, keysTransposed: UnsafePointer<Float>, keyStride: Int, tileStride: Int,
        values: UnsafePointer<Float>, valueStride: Int, dimensions: Int, scale: Float, softCap: Float,
        weights: UnsafeMutablePointer<Float>
    ) {
        PureSwiftKernels.attendFloatCacheTiled(
            queries, keysTransposed: keysTransposed, keyStride: keyStride, tileStride: tileStride, values: values,
            valueStride: valueStride, dimensions: dimensions, scale: scale, softCap: softCap, weights: weights,
            quads: BuiltKernels.vectorRegisters >= 32, build: BuiltKernels.self)
    }

    public func halvesToFloats(_ halves: UnsafePointer<UInt16>, _ out: UnsafeMutablePointer<Float>, count: Int) {
        PureSwiftKernels.halvesToFloats(halves, out, count: count)
    }

    public func halvesToFloatsTiled(
        _ halves: UnsafePointer<UInt16>, rows: Range<Int>, columns: Int, tile: Int, out: UnsafeMutablePointer<Float>
    ) {
        #if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
            halvesToFloatsTiledX86(halves, rows: rows, columns: columns, tile: tile, out: out)
        #else
            PureSwiftKernels.halvesToFloatsTiled(halves, rows: rows, columns: columns, tile: tile, out: out)
        #endif
    }

    public func swiGLU(
        gate: UnsafePointer<Float>, up: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int
    ) {
        swiGLUExact(gate: gate, up: up, out: out, count: count)
    }

    public func gelu(
        _ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int
    ) {
        #if arch(x86_64) && (SANAD_KERNEL_BUILD_AVX2 || SANAD_KERNEL_BUILD_AVX512)
            geluExactX86(x, up: up, out: out, count: count)
        #else
            geluExact(x, up: up, out: out, count: count)
        #endif
    }

    public func geluErf(
        _ x: UnsafePointer<Float>, up: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int
    ) {
        geluErfExact(x, up: up, out: out, count: count)
    }

    public func geluErfApproximate(_ x: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>, count: Int) {
        PureSwiftKernels.geluErfApproximate(x, out: out, count: count)
    }

    public func applyRoPE(
        _ x: UnsafeMutablePointer<Float>, heads: Int, table: UnsafePointer<Float>, dimensions: Int, mode: RoPEMode
    ) {
        for h in 0..<heads { applyRoPEExact(x + h * dimensions, table: table, dimensions: dimensions, mode: mode) }
    }
}
