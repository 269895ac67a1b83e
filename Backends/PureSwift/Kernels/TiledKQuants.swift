// K-quants that llama.cpp's AVX2 build does not repack (Q2_K, Q3_K, Q5_K, Q6_K, IQ4_XS) go two ways there: batches
// of at least `q6_KTiledMinimumBatch` activation rows through its tiled K-quant product (ggml-cpu/tiled), smaller
// ones through the type's ggml_vec_dot_*_q8_K. The tiled product forms, per super-block and weight row, the exact
// integer sums S₁ = Σ scale·q·a (and, for types with mins, S₂ = Σ min·Σa) and accumulates
// `acc = fma(d·S₁ − dmin·S₂, da, acc)` (the subtraction fused: `fma(−dmin, S₂, d·S₁)`), super-blocks in order.

/// A K-quant weight type whose batches of at least `q6_KTiledMinimumBatch` rows round as llama.cpp's tiled product
/// does (`Batched`), and smaller ones as its vec_dot (the type's own `dot`).
public protocol TiledKQuant: BatchRoundedWeightType {}

extension TiledKQuant {
    @inline(__always)
    @inlinable
    public static func takesBatchedKernel(rows: Int, columns: Int) -> Bool { rows >= q6_KTiledMinimumBatch }
}

/// One super-block's step of the tiled product: `fma(fma(−dmin, S₂, d·S₁), da, acc)`.
@inline(__always)
@inlinable
func tiledStep(_ acc: Float, d: Float, products: Int32, dmin: Float, mins: Int32, da: Float) -> Float {
    acc.addingProduct((d * Float(products)).addingProduct(-dmin, Float(mins)), da)
}
