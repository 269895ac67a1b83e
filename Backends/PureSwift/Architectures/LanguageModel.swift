import GGUF
import PureSwiftKernels

/// A loaded decoder-only model of one architecture: its configuration and memory-mapped weights. Immutable, so one
/// model can serve several sessions; each session runs it through its own `ModelRunner`.
public protocol LanguageModel: AnyObject, Sendable {
    /// The `general.architecture` string.
    var architecture: String { get }
    /// Rows of the output (logits per position).
    var vocabularySize: Int { get }
    /// `<arch>.context_length`: the context the model was trained with.
    var trainingContextLength: Int { get }
    /// KV cache bytes per position (all layers, keys and values).
    var kvBytesPerPosition: Int { get }
    /// A runner with its own KV cache for `contextLength` positions and scratch for batches of up to `batchSize`.
    /// Throws when the memory cannot be had.
    func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws -> any ModelRunner
}

/// Choices a session makes about how its runner computes.
public struct RunnerOptions: Sendable {
    /// The build of the kernels to run (`KernelBuilds`).
    public var kernels: any KernelSet
    /// Matrix products of whole batches handed to an outside library (the BLAS engine), nil for the engine's own
    /// kernels everywhere.
    public var batchedProducts: (any BatchedProducts)?
    /// How the KV cache stores keys and values (`kvCacheTypes`: `.f16`, llama.cpp's default, or `.q8_0`).
    public var cacheKeyType: GGMLType
    public var cacheValueType: GGMLType

    public init(
        kernels: any KernelSet = KernelBuilds.runnable[0], batchedProducts: (any BatchedProducts)? = nil,
        cacheKeyType: GGMLType = .f16, cacheValueType: GGMLType = .f16
    ) {
        self.kernels = kernels
        self.batchedProducts = batchedProducts
        self.cacheKeyType = cacheKeyType
        self.cacheValueType = cacheValueType
    }
}

/// Matrix products of a batch of float activations computed outside the pure-Swift kernels (the BLAS engine's
/// `sgemm`). The runner offers every projection of at least `minimumBatch` rows; the rest use its own kernels.
public protocol BatchedProducts: AnyObject, Sendable {
    /// The smallest batch worth handing over.
    var minimumBatch: Int { get }
    /// `out[b · w.rows + r] = Σc W[r, c] · x[b · w.columns + c]` for `b < rows`; false leaves the product to the
    /// runner's own kernels (a weight type the implementation does not take).
    func multiply(_ w: WeightMatrix, _ x: UnsafePointer<Float>, rows: Int, out: UnsafeMutablePointer<Float>) -> Bool
}

/// One session's state for running a model: the KV cache and scratch buffers, allocated once.
public protocol ModelRunner: AnyObject {
    /// Positions in the KV cache (tokens evaluated since the last reset).
    var position: Int { get }
    var contextLength: Int { get }
    /// The most tokens one `evaluate` call takes.
    var batchSize: Int { get }
    var vocabularySize: Int { get }
    /// Empties the KV cache.
    func reset()
    /// Evaluates `tokens` (at most `batchSize`, valid ids, fitting the context) at positions `position…`, appends
    /// them to the cache and writes the logits of token indices `outputs` (a sub-range of `0..<tokens.count`) into
    /// `logits`, `outputs.count × vocabularySize` floats.
    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>)
}

/// A decoder-only model whose sizes are its `DecoderDimensions` (every architecture here): the protocol supplies
/// the sizes `LanguageModel` asks for.
public protocol DecoderModel: LanguageModel {
    var dimensions: DecoderDimensions { get }
}

extension DecoderModel {
    public var vocabularySize: Int { dimensions.vocabularySize }
    public var trainingContextLength: Int { dimensions.trainingContextLength }
    public var kvBytesPerPosition: Int { dimensions.kvBytesPerPosition }
}
