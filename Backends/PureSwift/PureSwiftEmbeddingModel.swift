import Foundation
import PureSwiftKernels
import SanadCore
import SanadTokenizers

/// Sentence embeddings in pure Swift: a BERT sentence-transformers model folder (config.json, model.safetensors,
/// tokenizer.json, vocab.txt; all-MiniLM-L6-v2 for example), WordPiece ids, the encoder, mean pooling over the real
/// tokens and L2 normalisation (as the model's modules.json says). Texts longer than the model's sequence limit are
/// cut to it (the first tokens and `[SEP]`) and reported in `EmbeddingBatch.truncated`.
public final class PureSwiftEmbeddingModel: EmbeddingModel, @unchecked Sendable {  // @unchecked: immutable
    public let tokenizer: WordPieceTokenizer
    public let encoder: BertModel
    public let threads: Int
    /// Sentences per forward pass.
    public let batchSize: Int

    public var dimension: Int { encoder.configuration.hiddenSize }

    /// Loads the model folder at `url` (or the folder of a `model.safetensors` given directly).
    public init(at url: URL, options: ModelLoadOptions) throws {
        var isFolder: ObjCBool = false
        let folder =
            FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && !isFolder.boolValue
            ? url.deletingLastPathComponent() : url
        let kernels = try PureSwiftOptions(parsing: options.engineOptions).selectKernels()
        let configuration = try BertConfiguration(folder: folder)
        tokenizer = try WordPieceTokenizer(folder: folder)
        guard tokenizer.vocabularySize == configuration.vocabularySize else {
            throw PureSwiftError.badHyperparameter(
                path: folder.appendingPathComponent("config.json").path, key: "vocab_size",
                problem: "is \(configuration.vocabularySize) but vocab.txt has \(tokenizer.vocabularySize) tokens")
        }
        encoder = try BertModel(folder: folder, configuration: configuration, kernels: kernels)
        threads = options.threads
        batchSize = 32
    }

    /// The ids the encoder reads for `text`: cut to the sequence limit (keeping `[SEP]` last) when longer; says so.
    public func tokens(_ text: String) -> (ids: [Int32], truncated: Bool) {
        let ids = tokenizer.encode(text)
        let limit = encoder.configuration.maxSequenceLength
        guard ids.count > limit else { return (ids, false) }
        return (Array(ids.prefix(limit - 1)) + [tokenizer.separatorID], true)
    }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        try embedBatch(texts).vectors
    }

    /// The vectors, `batchSize` texts per encoder pass; `progress` gets the count done after each pass.
    public func embedBatch(_ texts: [String], progress: (Int) -> Void = { _ in }) throws -> EmbeddingBatch {
        var vectors: [[Float]] = []
        vectors.reserveCapacity(texts.count)
        var truncated: [Int] = []
        var counts: [Int] = []
        var start = 0
        while start < texts.count {
            let end = min(start + batchSize, texts.count)
            var batch: [[Int32]] = []
            for i in start..<end {
                let (ids, cut) = tokens(texts[i])
                if cut { truncated.append(i) }
                batch.append(ids)
                counts.append(ids.count)
            }
            vectors += try encoder.meanPooledEmbeddings(batch, threads: threads)
            start = end
            progress(end)
        }
        return EmbeddingBatch(
            vectors: vectors, truncated: truncated, sequenceLimit: encoder.configuration.maxSequenceLength,
            tokenCounts: counts)
    }

    public func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch {
        try embedBatch(texts)
    }

    public func embedReportingTruncation(_ texts: [String], progress: (Int) -> Void) async throws -> EmbeddingBatch {
        try embedBatch(texts, progress: progress)
    }
}
