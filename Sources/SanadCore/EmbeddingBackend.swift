import Foundation

/// An engine that turns text into vectors.
public protocol EmbeddingBackend: Sendable {
    /// The id configs use.
    var id: String { get }
    var availability: BackendAvailability { get }
    /// Loads an embedding model (a GGUF file, or a folder with safetensors and a vocabulary).
    func loadEmbeddingModel(at url: URL, options: ModelLoadOptions) async throws -> any EmbeddingModel
}

/// A loaded embedding model.
public protocol EmbeddingModel: AnyObject, Sendable {
    /// Length of every vector.
    var dimension: Int { get }
    /// One L2-normalised vector per text, pooled as the model says.
    func embed(_ texts: [String]) async throws -> [[Float]]
    /// `embed`, saying which texts were cut to the model's sequence limit. Default: `embed`, none cut.
    func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch
    /// `embedReportingTruncation`, calling `progress` with how many texts are done as the work advances (for a
    /// progress line). Default: one call when all are done.
    func embedReportingTruncation(_ texts: [String], progress: (Int) -> Void) async throws -> EmbeddingBatch
}

/// Vectors for a list of texts and which of them the model cut.
public struct EmbeddingBatch: Sendable, Equatable {
    public var vectors: [[Float]]
    /// Indices (into the texts) of the texts longer than the model reads, embedded from their first tokens.
    public var truncated: [Int]
    /// The model's limit in tokens, when it has one.
    public var sequenceLimit: Int?
    /// The tokens the model read for each text (special tokens included, after any cut); nil when the engine does
    /// not say.
    public var tokenCounts: [Int]?

    public init(vectors: [[Float]], truncated: [Int] = [], sequenceLimit: Int? = nil, tokenCounts: [Int]? = nil) {
        self.vectors = vectors
        self.truncated = truncated
        self.sequenceLimit = sequenceLimit
        self.tokenCounts = tokenCounts
    }
}

extension EmbeddingModel {
    public func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch {
        EmbeddingBatch(vectors: try await embed(texts))
    }

    public func embedReportingTruncation(_ texts: [String], progress: (Int) -> Void) async throws -> EmbeddingBatch {
        let batch = try await embedReportingTruncation(texts)
        progress(texts.count)
        return batch
    }
}

/// Scales `vector` to unit length (a zero vector stays zero).
public func l2Normalized(_ vector: [Float]) -> [Float] {
    var sum: Double = 0
    for v in vector { sum += Double(v) * Double(v) }
    guard sum > 0 else { return vector }
    let scale = Float(1 / sum.squareRoot())
    return vector.map { $0 * scale }
}

/// A model whose every vector is checked: one with a NaN or infinity (damaged weights, an engine that overflows) is
/// an error naming the model and the text, never a zero vector stored or printed as if it were an embedding.
public final class FiniteEmbeddingModel: EmbeddingModel {
    public let base: any EmbeddingModel
    /// The model as the person named it (its path), for the error.
    public let name: String

    public init(_ base: any EmbeddingModel, name: String) {
        self.base = base
        self.name = name
    }

    public var dimension: Int { base.dimension }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        let vectors = try await base.embed(texts)
        try check(vectors)
        return vectors
    }

    public func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch {
        try await embedReportingTruncation(texts) { _ in }
    }

    public func embedReportingTruncation(_ texts: [String], progress: (Int) -> Void) async throws -> EmbeddingBatch {
        let batch = try await base.embedReportingTruncation(texts, progress: progress)
        try check(batch.vectors)
        return batch
    }

    /// Throws `SanadError.engine` for the first vector with a non-finite value.
    func check(_ vectors: [[Float]]) throws {
        for (i, vector) in vectors.enumerated() {
            let bad = vector.reduce(0) { $0 + ($1.isFinite ? 0 : 1) }
            guard bad > 0 else { continue }
            throw SanadError.engine(
                "embedding model \(name) produced \(bad) NaN or infinite value(s) of \(vector.count) for text "
                    + "\(i + 1): its weights are damaged or this engine cannot run it; download the model again or "
                    + "pick another with -m")
        }
    }
}
