import PureSwiftKernels

/// How a runner cuts a batch into the slices its scratch holds, and which rows survive to the logits.
enum MicroBatches {
    /// The largest slice of the pure-Swift kernels. Smaller slices read the weights more often; larger ones gain
    /// nothing (the four-row products reuse a weight tile from cache either way) but hold more scratch: at 128,
    /// SmolLM2-135M's scratch is about 6 MiB instead of 21.
    static let limit = 128

    /// The slice size for batches of up to `batchSize` tokens: the whole batch for the BLAS engine's products
    /// (whose `sgemm` wants whole batches), at most `limit` otherwise.
    static func size(batchSize: Int, batchedProducts: (any BatchedProducts)?) -> Int {
        batchedProducts == nil ? min(max(1, batchSize), limit) : max(1, batchSize)
    }

    /// Runs `evaluate` on `tokens` in slices of `size`, each with the part of `outputs` (token indices whose logits
    /// are wanted) that falls in it, relative to the slice, and where its logits go (`logits`: rows of
    /// `vocabularySize`). The last argument says whether the slices take llama.cpp's tiled attention path, which it
    /// picks by the size of the whole batch.
    static func run(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>, size: Int,
        vocabularySize: Int,
        _ evaluate: (UnsafeBufferPointer<Int32>, Range<Int>, UnsafeMutablePointer<Float>, Bool) -> Void
    ) {
        let tiledAttention = tokens.count >= halfAccumulationBatchLimit
        var sliceStart = 0
        while sliceStart < tokens.count {
            var slice = sliceStart..<min(sliceStart + size, tokens.count)
            // llama.cpp multiplies the whole batch at once, and some of its kernels round by the batch's rows (the
            // tiled K-quant product from 8 rows, Q6_K.swift; Q4_K's groups of four, Q4_K.swift): a short last
            // slice takes eight rows of the full one before it, which keeps the slices' starts multiples of four.
            let rest = tokens.count - slice.upperBound
            let least = q6_KTiledMinimumBatch
            if rest > 0 && rest < least && slice.count == size && size >= 2 * least && size % 4 == 0 {
                slice = slice.lowerBound..<(slice.upperBound - least)
            }
            let sliceOutputs = outputs.clamped(to: slice)
            let logitRows = sliceOutputs.isEmpty ? 0 : sliceOutputs.lowerBound - outputs.lowerBound
            evaluate(
                UnsafeBufferPointer(rebasing: tokens[slice]),
                (sliceOutputs.lowerBound - sliceStart)..<(sliceOutputs.upperBound - sliceStart),
                logits + logitRows * vocabularySize, tiledAttention)
            sliceStart = slice.upperBound
        }
    }

    /// Moves rows `rows` of `buffer` (rows of `width` values) to the front: the rows that reach the logits, after
    /// the last layer's attention.
    static func keep(_ rows: Range<Int>, of buffer: UnsafeMutablePointer<Float>, width: Int) {
        for (i, r) in rows.enumerated() where i != r {
            (buffer + i * width).update(from: buffer + r * width, count: width)
        }
    }
}
