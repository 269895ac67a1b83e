import PureSwiftKernels

/// The sizes of a decoder-only transformer that its runner's buffers and blocks depend on.
struct DecoderShape: DecoderConfiguration {
    var dimensions: DecoderDimensions
    /// The scale attention applies to q·k (1 when the architecture scales the queries itself).
    var attentionScale: Float
    var activation: FeedForwardActivation
    /// Soft-capping of the attention scores (`c · tanh(s / c)`, Gemma 2), 0 for none.
    var attentionSoftCap: Float = 0
}

/// The sequences the rows of one forward pass belong to: one sequence in `cache` from its count on (a session's own
/// evaluation), or one new token of each of several sequences, row b in `caches[b]` (a batched decoding step of
/// sessions that share a runner, `SharedDecoder`).
enum PassSequences {
    case one(KVCache)
    case decoding([KVCache])

    /// The position of row `b`.
    @inline(__always)
    func position(row b: Int) -> Int {
        switch self {
        case .one(let cache): return cache.count + b
        case .decoding(let caches): return caches[b].count
        }
    }
}

/// What every decoder runner owns, whatever its architecture: the KV cache, the shared blocks (projections,
/// attention, feed-forward) and the scratch of one micro-batch, all allocated up front.
final class DecoderState {
    let shape: DecoderShape
    let cache: KVCache
    /// The Walsh–Hadamard block sizes of a Q8_0 cache's rotations (`cacheRotations`; 0: none).
    let rotations: (keys: Int, values: Int)
    let contextLength: Int
    let batchSize: Int
    /// Tokens run through the layers together (`MicroBatches`): the scratch buffers hold one slice.
    let microBatch: Int
    let scratch = ScratchBuffers()
    var kernels: any KernelSet { projector.kernels }
    let projector: Projector
    let attention: SelfAttention
    let feedForward: FeedForward
    /// One micro-batch's rows: the residual stream `x` and the normed input / block output `xb` (embedding wide),
    /// the queries `q` and attention output `attended` (heads · headDimension), the keys `k` and values `v`
    /// (kvHeads · headDimension).
    let x, xb, q, k, v, attended: UnsafeMutablePointer<Float>

    init(_ s: DecoderShape, contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws {
        let (kernels, batchedProducts) = (options.kernels, options.batchedProducts)
        shape = s
        self.contextLength = contextLength
        self.batchSize = max(1, batchSize)
        let b = MicroBatches.size(batchSize: batchSize, batchedProducts: batchedProducts)
        microBatch = b
        cache = try KVCache(
            layers: s.layers, capacity: contextLength, kvDimensions: s.kvDimensions, keyType: options.cacheKeyType,
            valueType: options.cacheValueType)
        rotations = cacheRotations(
            keyType: options.cacheKeyType, valueType: options.cacheValueType, headDimension: s.headDimension)
        projector = Projector(
            rows: b, columns: max(s.embedding, s.queryDimensions, s.feedForward), threads: threads, kernels: kernels,
            batchedProducts: batchedProducts)
        attention = try SelfAttention(
            heads: s.heads, kvHeads: s.kvHeads, headDimension: s.headDimension, scale: s.attentionScale,
            softCap: s.attentionSoftCap, contextLength: contextLength, threads: threads, kernels: kernels,
            scratch: scratch)
        feedForward = try FeedForward(
            activation: s.activation, width: s.feedForward, batch: b, projector: projector, scratch: scratch)
        x = try scratch.floats(b * s.embedding)
        xb = try scratch.floats(b * s.embedding)
        q = try scratch.floats(b * s.queryDimensions)
        k = try scratch.floats(b * s.kvDimensions)
        v = try scratch.floats(b * s.kvDimensions)
        attended = try scratch.floats(b * s.queryDimensions)
    }

    /// RoPE for `configuration` over one micro-batch, its tables in this state's scratch.
    func rotaryEmbedding(_ configuration: RoPEConfiguration) throws -> RotaryEmbedding {
        try RotaryEmbedding(
            configuration, headDimension: shape.headDimension, batch: microBatch, kernels: kernels, scratch: scratch)
    }

    /// Runs an elementwise step (norms, RoPE, residuals) over a pass's `rows` rows, in chunks on the workers for a
    /// prompt (`parallelRows`). Each row is computed as it would be alone.
    func forRows(_ rows: Int, _ body: (Range<Int>) -> Void) {
        parallelRows(rows, width: shape.embedding, threads: projector.threads, body)
    }

    /// Rows `r` of `out` = `norm` of rows `r` of `x` (residual-stream wide; `out` may be `x`).
    func normalize(
        _ x: UnsafePointer<Float>, with norm: RMSNorm, into out: UnsafeMutablePointer<Float>, rows r: Range<Int>
    ) {
        let dim = shape.embedding
        norm.apply(x + r.lowerBound * dim, into: out + r.lowerBound * dim, rows: r.count, width: dim)
    }

    /// q, k, v = Wq · norm(x), Wk · norm(x), Wv · norm(x) for the first `rows` rows: the start of every
    /// architecture's attention block.
    func projectAttentionInput(_ a: AttentionWeights, rows n: Int) {
        forRows(n) { r in normalize(x, with: a.norm, into: xb, rows: r) }
        projector.projectGroup((a.query, q), (a.key, k), (a.value, v), xb, rows: n)
    }

    /// Rows `r` of the queries `q` and keys `k` made ready for attention: each head through its RMS norm when the
    /// architecture has one (Qwen 3, Gemma 3), rotated by `rope`, and the queries times `queryScale` (architectures
    /// that scale Q rather than the scores: ggml_scale after RoPE).
    func positionQueriesAndKeys(
        rows r: Range<Int>, queryNorm: RMSNorm?, keyNorm: RMSNorm?, rope: RotaryEmbedding, queryScale: Float = 1
    ) {
        let (heads, kvHeads, hd) = (shape.heads, shape.kvHeads, shape.headDimension)
        let (queryDimensions, kvDimensions) = (shape.queryDimensions, shape.kvDimensions)
        let (qr, kr) = (q + r.lowerBound * queryDimensions, k + r.lowerBound * kvDimensions)
        queryNorm?.apply(qr, into: qr, rows: r.count * heads, width: hd)
        keyNorm?.apply(kr, into: kr, rows: r.count * kvHeads, width: hd)
        for b in r {
            rope.apply(q + b * queryDimensions, heads: heads, row: b)
            rope.apply(k + b * kvDimensions, heads: kvHeads, row: b)
        }
        if queryScale != 1 {
            for i in 0..<r.count * queryDimensions { qr[i] *= queryScale }
        }
    }

    /// Rows `r` of the residual stream `x` += the same rows of `y`.
    func addToResidual(_ y: UnsafePointer<Float>, rows r: Range<Int>) {
        let dim = shape.embedding
        addResidual(y + r.lowerBound * dim, to: x + r.lowerBound * dim, count: r.count * dim)
    }

    /// `x` = rows `tokens` of `embedding`, each times `scale`.
    func embed(_ tokens: UnsafeBufferPointer<Int32>, from embedding: WeightMatrix, scale: Float = 1) {
        let dim = shape.embedding
        for (b, token) in tokens.enumerated() {
            let row = x + b * dim
            embedding.dequantizeRow(Int(token), into: row)
            if scale != 1 { for i in 0..<dim { row[i] *= scale } }
        }
    }

    /// After the last layer's attention only the rows whose logits are wanted matter: moves them (of `attended`, or
    /// with `projected` of its output projection in `xb`, and of `x`) to the front and makes `rows` and `outputs`
    /// count only them. False when no row is wanted.
    func keepOutputRows(_ outputs: inout Range<Int>, rows n: inout Int, projected: Bool = false) -> Bool {
        if outputs != 0..<n {
            if projected {
                MicroBatches.keep(outputs, of: xb, width: shape.embedding)
            } else {
                MicroBatches.keep(outputs, of: attended, width: shape.queryDimensions)
            }
            MicroBatches.keep(outputs, of: x, width: shape.embedding)
            n = outputs.count
            outputs = 0..<n
        }
        return n > 0
    }

    /// Stores the keys and values of the pass's `rows` rows (`k`, `v`) in their caches, and attends each query row
    /// of `q` to its sequence into `attended`. Leaves the caches' counts alone. With a Q8_0 cache side, first
    /// rotates the queries and keys (Q8_0 keys) or the values (Q8_0 values) in place, and the output back after, as
    /// llama.cpp does (`cacheRotations`).
    func storeAndAttend(
        _ q: UnsafeMutablePointer<Float>, _ k: UnsafeMutablePointer<Float>, _ v: UnsafeMutablePointer<Float>,
        layer l: Int, pass: PassSequences, rows n: Int, tiled: Bool, mask: AttentionMask = AttentionMask(),
        into attended: UnsafeMutablePointer<Float>
    ) {
        let (queryDimensions, kvDimensions) = (shape.queryDimensions, shape.kvDimensions)
        if rotations.keys > 0 {
            rotateWalshHadamard(q, count: n * queryDimensions, size: rotations.keys)
            rotateWalshHadamard(k, count: n * kvDimensions, size: rotations.keys)
        }
        if rotations.values > 0 { rotateWalshHadamard(v, count: n * kvDimensions, size: rotations.values) }
        defer {
            if rotations.values > 0 {
                rotateWalshHadamard(attended, count: n * queryDimensions, size: rotations.values)
            }
        }
        switch pass {
        case .one(let cache):
            cache.store(keys: k, values: v, layer: l, position: cache.count, count: n)
            attention.attend(
                q, cache: cache, layer: l, tokens: n, start: cache.count, tiled: tiled, mask: mask, into: attended)
        case .decoding(let caches):
            let kv = shape.kvDimensions
            for (b, cache) in caches.enumerated() {
                cache.store(keys: k + b * kv, values: v + b * kv, layer: l, position: cache.count, count: 1)
            }
            attention.attendDecoding(q, caches: caches, layer: l, mask: mask, into: attended)
        }
    }

    /// `logits` = `output` · `norm`(rows `outputs` of `x`).
    func logits(
        _ outputs: Range<Int>, norm: RMSNorm, output: WeightMatrix, into logits: UnsafeMutablePointer<Float>
    ) {
        let dim = shape.embedding
        norm.apply(x + outputs.lowerBound * dim, into: xb, rows: outputs.count, width: dim)
        projector.logits(output, xb, rows: outputs.count, into: logits)
    }
}

/// A decoder-only runner: an architecture's forward pass over a `DecoderState`. The protocol supplies the rest of
/// `ModelRunner` (positions, reset, micro-batch slicing).
protocol DecoderRunner: ModelRunner {
    var state: DecoderState { get }
    /// The forward pass of at most `state.microBatch` tokens of `pass`, with attention on llama.cpp's tiled path or
    /// its vector path; stores their keys and values but leaves the caches' counts alone.
    func forward(
        _ tokens: UnsafeBufferPointer<Int32>, pass: PassSequences, outputs: Range<Int>,
        logits: UnsafeMutablePointer<Float>, tiledAttention: Bool)
}

extension DecoderRunner {
    var position: Int { state.cache.count }
    var contextLength: Int { state.contextLength }
    var batchSize: Int { state.batchSize }
    var vocabularySize: Int { state.shape.vocabularySize }

    func reset() { state.cache.count = 0 }

    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>) {
        evaluate(tokens, outputs: outputs, logits: logits, cache: state.cache)
    }

    /// `evaluate` for the sequence in `cache` (a session sharing this runner, `SharedDecoder`).
    func evaluate(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>, cache: KVCache
    ) {
        precondition(tokens.count <= batchSize && cache.count + tokens.count <= cache.capacity, "batch does not fit")
        MicroBatches.run(
            tokens, outputs: outputs, logits: logits, size: state.microBatch, vocabularySize: vocabularySize
        ) { slice, sliceOutputs, sliceLogits, tiled in
            guard !slice.isEmpty else { return }
            self.forward(
                slice, pass: .one(cache), outputs: sliceOutputs, logits: sliceLogits, tiledAttention: tiled)
            cache.count += slice.count
        }
    }

    /// One decoding step of several sequences: token b goes at the next position of `caches[b]` (at most
    /// `state.microBatch` of them, each with room for one more), and its logits are row b of `logits`. Each row is
    /// computed as a single-token `evaluate` of its sequence computes it, on the same kernels' paths for the
    /// batch's size.
    func decode(_ tokens: UnsafeBufferPointer<Int32>, caches: [KVCache], logits: UnsafeMutablePointer<Float>) {
        precondition(
            tokens.count == caches.count && tokens.count <= state.microBatch
                && caches.allSatisfy { $0.count < $0.capacity }, "decoding step does not fit")
        forward(tokens, pass: .decoding(caches), outputs: 0..<tokens.count, logits: logits, tiledAttention: false)
        for cache in caches { cache.count += 1 }
    }
}
