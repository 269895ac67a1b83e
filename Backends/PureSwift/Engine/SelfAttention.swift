import PureSwiftKernels

/// Which cached positions a query attends to.
struct AttentionMask: Sendable, Equatable {
    /// Only positions up to the query's own (a decoder); false: every position of the batch (an encoder).
    var causal = true
    /// With a sliding window of `w` positions, a query at position p sees positions after p − w only (llama.cpp's
    /// LLAMA_SWA_TYPE_STANDARD: masked when p − p₀ ≥ w).
    var window: Int? = nil

    /// The positions a query at `position` attends to, of `0..<total` in the cache.
    @inline(__always)
    func positions(query position: Int, total: Int) -> Range<Int> {
        let end = causal ? position + 1 : total
        guard let window else { return 0..<end }
        return max(0, position - window + 1)..<end
    }
}

/// Multi-head (grouped-query) attention over the KV cache, as llama.cpp's CPU flash attention computes it
/// (Kernels/Attention.swift): over an F16 cache its vector path for batches under `halfAccumulationBatchLimit` tokens
/// and its tiled path for larger ones; with a Q8_0 side its vector path for every batch
/// (Kernels/QuantizedCacheAttention.swift). Owns the per-worker scratch and the float copy of one layer's cache that the
/// tiled path reads.
final class SelfAttention {
    let heads: Int
    let kvHeads: Int
    let headDimension: Int
    /// Applied to the scores (1/√headDimension unless the model says otherwise).
    let scale: Float
    /// Logit soft-capping of the scores (`c · tanh(s / c)`), 0 for none.
    let softCap: Float
    let contextLength: Int
    let threads: Int
    let kernels: any KernelSet

    private let queries: UnsafeMutablePointer<Float>  // (threads, headDimension) half-rounded query
    private let accumulators: UnsafeMutablePointer<Float>  // per thread, vectorScratchFloats
    private let groupScratch: UnsafeMutablePointer<Float>  // per thread, a KV head's query heads: rounded + scratch
    private let splitQueries: UnsafeMutablePointer<Float>  // (heads, headDimension): the split decode's rounded query
    private let splitPartials: UnsafeMutablePointer<Float>  // per thread, its range's VectorPathPartials
    /// One layer's keys for the tiled path, tile by tile: per tile of 64 positions, `kvHeads · headDimension` rows
    /// of 64 floats (`attendFloatCacheTiled`'s `tileStride` 64 · kvDimensions, `keyStride` 64). In one matrix of
    /// rows as long as the context, a tile's rows lay a context's length apart (2 KiB at 512 positions), so they
    /// fell in a few cache sets and evicted each other: most reads of a key missed the level-1 cache.
    private let keysFloat: UnsafeMutablePointer<Float>
    private let valuesFloat: UnsafeMutablePointer<Float>  // (contextLength, kvHeads · headDimension) its values
    private let weights: UnsafeMutablePointer<Float>  // (threads, tiledBlockTokens · heads / kvHeads · (64 + 2))
    /// Tokens whose queries the tiled path takes through the keys and values together: about 32 queries, whose
    /// outputs and weights stay in the level-1 and level-2 caches with a tile of keys and values.
    let tiledBlockTokens: Int

    var queryDimensions: Int { heads * headDimension }
    var kvDimensions: Int { kvHeads * headDimension }

    init(
        heads: Int, kvHeads: Int, headDimension: Int, scale: Float, softCap: Float = 0, contextLength: Int,
        threads: Int, kernels: any KernelSet, scratch: ScratchBuffers
    ) throws {
        self.heads = heads
        self.kvHeads = kvHeads
        self.headDimension = headDimension
        self.scale = scale
        self.softCap = softCap
        self.contextLength = contextLength
        self.threads = max(1, threads)
        self.kernels = kernels
        let kvDimensions = kvHeads * headDimension
        queries = try scratch.floats(self.threads * headDimension)
        accumulators = try scratch.floats(self.threads * Self.vectorScratchFloats(headDimension: headDimension))
        groupScratch = try scratch.floats(
            self.threads * Self.groupScratchFloats(heads: heads / max(1, kvHeads), headDimension: headDimension))
        splitQueries = try scratch.floats(heads * headDimension)
        splitPartials = try scratch.floats(
            self.threads
                * vectorPathHeadsScratch(heads: heads / max(1, kvHeads), kvHeads: kvHeads, dimensions: headDimension))
        keysFloat = try scratch.floats(tiledKeyStride(contextLength: contextLength) * kvDimensions)
        valuesFloat = try scratch.floats(contextLength * kvDimensions)
        let group = heads / max(1, kvHeads)
        tiledBlockTokens = max(1, 32 / group)
        weights = try scratch.floats(self.threads * TiledQueries.weightCount(queries: tiledBlockTokens * group))
    }

    /// Floats of one worker's scratch for one head on the vector path (either cache type).
    private static func vectorScratchFloats(headDimension hd: Int) -> Int {
        max(cacheVectorPathScratch(dimensions: hd), vectorPathHeadsScratch(heads: 1, dimensions: hd))
    }

    /// Floats of one worker's scratch for the `heads` query heads of a KV head on the vector path: their rounded
    /// queries, then `attendHalfCacheVectorPathHeads`'s scratch.
    private static func groupScratchFloats(heads: Int, headDimension hd: Int) -> Int {
        heads * hd + vectorPathHeadsScratch(heads: heads, dimensions: hd)
    }

    /// Attention of `n` new tokens at positions `start…` over layer `layer` of `cache` (which holds their keys and
    /// values already), every head: `q` is (n, heads · headDimension), `out` the same shape. `tiled` picks
    /// llama.cpp's tiled path (its choice depends on the whole batch's size, so the caller makes it).
    func attend(
        _ q: UnsafePointer<Float>, cache: KVCache, layer l: Int, tokens n: Int, start: Int, tiled: Bool,
        mask: AttentionMask = AttentionMask(), into out: UnsafeMutablePointer<Float>
    ) {
        let heads = self.heads
        let hd = headDimension
        let group = heads / kvHeads
        let queryDimensions = self.queryDimensions
        let kvDimensions = self.kvDimensions
        let scale = self.scale
        let softCap = self.softCap
        let kernels = self.kernels
        let positions = start + n
        let workers = n * heads * positions < 256 ? 1 : threads
        if n == 1 && cache.isHalf && hd % 32 == 0 {
            let seen = mask.positions(query: start, total: positions)
            if let cells = splitDecodeCells(cache, positions: positions) {
                attendSplit(q, cache: cache, layer: l, seen: seen, cells: cells, into: out)
                return
            }
            // One token (a generation step) over fewer cells: each worker takes a contiguous share of the heads,
            // those of one KV head together in one pass over its keys and values.
            parallelChunksIndexed(workers, threads: workers) { worker, _ in
                var h = worker * heads / workers
                let end = (worker + 1) * heads / workers
                while h < end {
                    let last = min(end, (h / group + 1) * group)
                    attendVectorHeads(
                        q + h * hd, heads: h..<last, cache: cache, layer: l,
                        seen: mask.positions(query: start, total: positions), worker: worker, into: out + h * hd)
                    h = last
                }
            }
            return
        }
        if !tiled || !cache.isHalf {
            // llama.cpp's vector path, reproduced exactly (see Kernels/Attention.swift).
            let items = n * heads
            parallelChunksIndexed(workers, threads: workers) { worker, _ in
                // Items dealt round-robin: later tokens attend to more positions, so contiguous shares would
                // leave the first worker waiting.
                for item in Swift.stride(from: worker, to: items, by: workers) {
                    let b = item / heads
                    let h = item % heads
                    attendVector(
                        q + b * queryDimensions + h * hd, head: h, cache: cache, layer: l,
                        seen: mask.positions(query: start + b, total: positions), worker: worker,
                        into: out + b * queryDimensions + h * hd)
                }
            }
            return
        }
        // Large batches: llama.cpp's tiled path (see Kernels/Attention.swift) over keys and values converted to
        // float once per layer: keys transposed (dimension-major) tile by tile, values as they are; from the first
        // tile any query of the batch sees.
        let keys = UnsafePointer(cache.keys(layer: l, position: 0).assumingMemoryBound(to: UInt16.self))
        let values = UnsafePointer(cache.values(layer: l, position: 0).assumingMemoryBound(to: UInt16.self))
        let tileStride = attentionTileSize * kvDimensions
        let keysFloat = self.keysFloat
        let valuesFloat = self.valuesFloat
        let weights = self.weights
        let lowest =
            mask.positions(query: start, total: positions).lowerBound / attentionTileSize * attentionTileSize
        parallelChunks(positions - lowest, threads: threads) { chunk in
            let rows = (chunk.lowerBound + lowest)..<(chunk.upperBound + lowest)
            kernels.halvesToFloatsTiled(
                keys, rows: rows, columns: kvDimensions, tile: attentionTileSize, out: keysFloat)
            let first = rows.lowerBound * kvDimensions
            kernels.halvesToFloats(values + first, valuesFloat + first, count: rows.count * kvDimensions)
        }
        // One item per block of tokens and KV head: the block's query heads that read the same keys and values
        // take each tile together (`attendFloatCacheTiled`), so a tile is read once per block, not once per token.
        let block = tiledBlockTokens
        let blocks = (n + block - 1) / block
        let items = blocks * kvHeads
        parallelChunksIndexed(workers, threads: workers) { worker, _ in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * block) { ranges in
                let firsts = ranges.baseAddress!
                let counts = firsts + block
                for item in Swift.stride(from: worker, to: items, by: workers) {  // round-robin, as above
                    let b0 = item / kvHeads * block
                    let kvHead = item % kvHeads
                    let tokens = min(block, n - b0)
                    for t in 0..<tokens {
                        let seen = mask.positions(query: start + b0 + t, total: positions)
                        (firsts[t], counts[t]) = (seen.lowerBound, seen.upperBound)
                    }
                    let kvOffset = kvHead * hd
                    let queryOffset = b0 * queryDimensions + kvHead * group * hd
                    kernels.attendFloatCacheTiled(
                        TiledQueries(
                            base: q + queryOffset, heads: group, headStride: hd, tokens: tokens,
                            tokenStride: queryDimensions, firsts: firsts, counts: counts, out: out + queryOffset,
                            outHeadStride: hd, outTokenStride: queryDimensions),
                        keysTransposed: keysFloat + kvOffset * attentionTileSize, keyStride: attentionTileSize,
                        tileStride: tileStride, values: valuesFloat + kvOffset, valueStride: kvDimensions,
                        dimensions: hd, scale: scale, softCap: softCap,
                        weights: weights + worker * TiledQueries.weightCount(queries: block * group))
                }
            }
        }
    }

    /// One new token of each of several sequences (a batched decoding step, `PassSequences.decoding`): query row b
    /// attends to `caches[b]`, whose position `count` already holds its own key and value, on the vector path a
    /// single token takes, so each row's result is the one its sequence would get alone.
    func attendDecoding(
        _ q: UnsafePointer<Float>, caches: [KVCache], layer l: Int, mask: AttentionMask,
        into out: UnsafeMutablePointer<Float>
    ) {
        let heads = self.heads
        let hd = headDimension
        let queryDimensions = self.queryDimensions
        // Sequences llama.cpp would take through its split decode path alone take it here too, one after another
        // (each on every worker); the others share the workers head by head.
        let split = caches.map { cache in
            let seen = mask.positions(query: cache.count, total: cache.count + 1)
            return splitDecodeCells(cache, positions: cache.count + 1).map { (seen, $0) }
        }
        for (b, cache) in caches.enumerated() {
            guard let (seen, cells) = split[b] else { continue }
            attendSplit(
                q + b * queryDimensions, cache: cache, layer: l, seen: seen, cells: cells,
                into: out + b * queryDimensions)
        }
        let alone = split.map { $0 != nil }
        let items = caches.count * heads
        let longest = (caches.map(\.count).max() ?? 0) + 1
        let workers = items * longest < 256 ? 1 : threads
        parallelChunksIndexed(workers, threads: workers) { worker, _ in
            for item in Swift.stride(from: worker, to: items, by: workers) where !alone[item / heads] {
                let b = item / heads
                let h = item % heads
                let cache = caches[b]
                let position = cache.count
                attendVector(
                    q + b * queryDimensions + h * hd, head: h, cache: cache, layer: l,
                    seen: mask.positions(query: position, total: position + 1), worker: worker,
                    into: out + b * queryDimensions + h * hd)
            }
        }
    }

    /// The cells llama.cpp's split decode path cuts (`attendSplit`) for one token's attention over `cache` when
    /// `positions` positions are cached (the new one's included), whatever part of them the mask shows it, or nil
    /// where llama.cpp takes one pass. Its n_kv is the positions padded to a multiple of 256 (`llama_kv_cache::get_n_kv`), and from
    /// 512 cells on it splits a single query's attention over an F16 cache across its threads by cells. That holds
    /// for a sliding window's layers too (Gemma's), whose positions sit in the same cells: the cut is over all n_kv
    /// cells and each worker skips the positions outside the window, so a window may fall in one worker's range.
    /// (llama.cpp's default context parameters keep a full-size SWA cache, `swa_full`, where position p is cell p.
    /// With `swa_full` off, as its common tools set it, the SWA cache holds n_swa + n_ubatch cells, padded to 256,
    /// and once full reuses them as a ring, walking positions in cell order: this cache does not reproduce that.)
    private func splitDecodeCells(_ cache: KVCache, positions: Int) -> Int? {
        let cells = max(256, (positions + 255) / 256 * 256)
        guard cache.isHalf && headDimension % 32 == 0 && cells >= 512 else { return nil }
        return cells
    }

    /// One token's attention, every head, over positions `seen` of layer `l` of an F16 `cache`, as llama.cpp's
    /// split decode path computes it (ggml_compute_forward_flash_attn_ext_f16 with one query row and n_kv ≥ 512):
    /// the `cells` cells cut into `threads` equal ranges, each worker attending every head over the positions of
    /// its range (`attendHalfCacheVectorPathHeads`, every KV head in one pass, so each reads a contiguous stretch of
    /// the cache), then the ranges' partials combined in order (`reduceVectorPathPartials`). The cut changes the
    /// rounding, so it follows llama.cpp's: with the same thread count, the result is llama.cpp's bit for bit.
    private func attendSplit(
        _ q: UnsafePointer<Float>, cache: KVCache, layer l: Int, seen: Range<Int>, cells: Int,
        into out: UnsafeMutablePointer<Float>
    ) {
        let hd = headDimension
        let group = heads / kvHeads
        let rounded = splitQueries
        for i in 0..<heads * hd { rounded[i] = roundToHalf(q[i]) }
        let chunk = (cells + threads - 1) / threads
        let partialFloats = vectorPathHeadsScratch(heads: group, kvHeads: kvHeads, dimensions: hd)
        let (kernels, scale, softCap, kvDimensions) = (self.kernels, self.scale, self.softCap, self.kvDimensions)
        let partials = splitPartials
        parallelChunksIndexed(threads, threads: threads) { worker, _ in
            // This worker's cells, less the positions the mask hides (llama.cpp skips those); maybe none.
            let lower = min(max(seen.lowerBound, worker * chunk), seen.upperBound)
            let range = lower..<max(lower, min(seen.upperBound, (worker + 1) * chunk))
            kernels.attendHalfCacheVectorPathHeads(
                queries: rounded, heads: group, kvHeads: kvHeads,
                keys: UnsafePointer(
                    cache.keys(layer: l, position: range.lowerBound).assumingMemoryBound(to: UInt16.self)),
                values: UnsafePointer(
                    cache.values(layer: l, position: range.lowerBound).assumingMemoryBound(to: UInt16.self)),
                stride: kvDimensions, count: range.count, dimensions: hd, scale: scale, softCap: softCap,
                scratch: partials + worker * partialFloats, out: nil)
        }
        reduceVectorPathPartials(
            (0..<threads).map { VectorPathPartials(partials + $0 * partialFloats, rows: heads, dimensions: hd) },
            rows: heads, dimensions: hd, out: out)
    }

    /// Query heads `heads` (of one KV head; `queries` their rows, one after another) over positions `seen` of layer
    /// `l` of an F16 `cache` on llama.cpp's vector path, in one pass (`attendHalfCacheVectorPathHeads`), with worker
    /// `worker`'s scratch.
    private func attendVectorHeads(
        _ queries: UnsafePointer<Float>, heads: Range<Int>, cache: KVCache, layer l: Int, seen: Range<Int>,
        worker: Int, into out: UnsafeMutablePointer<Float>
    ) {
        let hd = headDimension
        let group = self.heads / kvHeads
        let rounded = groupScratch + worker * Self.groupScratchFloats(heads: group, headDimension: hd)
        for i in 0..<heads.count * hd { rounded[i] = roundToHalf(queries[i]) }
        let offset = heads.lowerBound / group * hd
        kernels.attendHalfCacheVectorPathHeads(
            queries: rounded, heads: heads.count, kvHeads: 1,
            keys: UnsafePointer(cache.keys(layer: l, position: seen.lowerBound).assumingMemoryBound(to: UInt16.self))
                + offset,
            values: UnsafePointer(
                cache.values(layer: l, position: seen.lowerBound).assumingMemoryBound(to: UInt16.self)) + offset,
            stride: kvDimensions, count: seen.count, dimensions: hd, scale: scale, softCap: softCap,
            scratch: rounded + group * hd, out: out)
    }

    /// One query head (`query`, head `h`) over positions `seen` of layer `l` of `cache` on llama.cpp's vector path,
    /// with worker `worker`'s scratch: `attendHalfCacheVectorPath` for an F16 cache, `attendCacheVectorPath` for one
    /// with a Q8_0 side.
    @inline(__always)
    private func attendVector(
        _ query: UnsafePointer<Float>, head h: Int, cache: KVCache, layer l: Int, seen: Range<Int>, worker: Int,
        into out: UnsafeMutablePointer<Float>
    ) {
        let hd = headDimension
        let kvHead = h / (heads / kvHeads)
        let keys = UnsafeRawPointer(cache.keys(layer: l, position: seen.lowerBound))
        let values = UnsafeRawPointer(cache.values(layer: l, position: seen.lowerBound))
        let scratch = accumulators + worker * Self.vectorScratchFloats(headDimension: hd)
        guard cache.isHalf else {
            kernels.attendCacheVectorPath(
                query: query, keys: keys + kvCacheRowBytes(cache.keyType, count: kvHead * hd),
                keyType: cache.keyType, keyStride: cache.keyRowBytes,
                values: values + kvCacheRowBytes(cache.valueType, count: kvHead * hd), valueType: cache.valueType,
                valueStride: cache.valueRowBytes, count: seen.count, dimensions: hd, scale: scale, softCap: softCap,
                scratch: scratch, out: out)
            return
        }
        let rounded = queries + worker * hd
        for i in 0..<hd { rounded[i] = roundToHalf(query[i]) }
        kernels.attendHalfCacheVectorPath(
            query: rounded, keys: keys.assumingMemoryBound(to: UInt16.self) + kvHead * hd,
            values: values.assumingMemoryBound(to: UInt16.self) + kvHead * hd, stride: kvDimensions,
            count: seen.count, dimensions: hd, scale: scale, softCap: softCap, scratch: scratch, out: out)
    }
}
