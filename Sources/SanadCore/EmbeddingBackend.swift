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
}

/// Vectors for a list of texts and which of them the model cut.
public struct EmbeddingBatch: Sendable, Equatable {
    public var vectors: [[Float]]
    /// Indices (into the texts) of the texts longer than the model reads, embedded from their first tokens.
    public var truncated: [Int]
    /// The model's limit in tokens, when it has one.
    public var sequenceLimit: Int?

    public init(vectors: [[Float]], truncated: [Int] = [], sequenceLimit: Int? = nil) {
        self.vectors = vectors
        self.truncated = truncated
        self.sequenceLimit = sequenceLimit
    }
}

extension EmbeddingModel {
    public func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch {
        EmbeddingBatch(vectors: try await embed(texts))
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
