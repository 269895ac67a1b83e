import Foundation
import SanadCore

/// Sentence vectors from a GGUF model through libllama: a context with embeddings on, pooled as the model says
/// (`<arch>.pooling_type`), or as the `pooling` engine option says (`mean`, `cls`, `last`), or by mean when the
/// model names none (a generative model such as SmolLM2). Vectors are L2-normalised.
// @unchecked Sendable: the libllama context is used under its lock
final class LlamaEmbeddingModel: EmbeddingModel, @unchecked Sendable {
    let dimension: Int
    /// The pooling the context uses (`llama_pooling_type`).
    let pooling: LlamaPoolingType
    private let core: LlamaModelContext
    private let lock = NSLock()

    init(library: LlamaLibrary, url: URL, options: ModelLoadOptions) throws {
        let requested = try Self.requestedPooling(options)
        var chosen = LlamaPoolingType.mean
        core = try LlamaModelContext(library: library, url: url, options: options) { params, model in
            let arch = LlamaModelContext.metadata("general.architecture", library: library, model: model) ?? ""
            let fromModel = LlamaModelContext.metadata("\(arch).pooling_type", library: library, model: model)
                .flatMap(Int32.init).flatMap(LlamaPoolingType.init(rawValue:))
            switch requested ?? fromModel {
            case .some(.rank):
                throw LlamaCppError.embeddingUnavailable(
                    path: url.path, problem: "the model is a reranker (pooling_type rank), not an embedding model")
            case .some(let p) where p != .none && p != .unspecified: chosen = p
            default: chosen = .mean
            }
            // A pooled sequence must fit one micro-batch: batch = micro-batch = context.
            let training = Int(library.modelNCtxTrain(model))
            let n = UInt32(max(8, options.contextLength ?? min(training > 0 ? training : 512, 512)))
            params.nCtx = n
            params.nBatch = n
            params.nUBatch = n
            params.embeddings = true
            params.poolingType = chosen.rawValue
        }
        pooling = LlamaPoolingType(rawValue: library.poolingType(core.context)) ?? chosen
        dimension = Int(library.modelNEmbd(core.model))
    }

    private static func requestedPooling(_ options: ModelLoadOptions) throws -> LlamaPoolingType? {
        guard let value = options.engineOptions["pooling"] else { return nil }
        let names = ["mean": LlamaPoolingType.mean, "cls": .cls, "last": .last]
        guard let name = value.stringValue, let p = names[name] else {
            throw LlamaCppError.invalidOption(
                key: "pooling", problem: "got \(value), expected one of \(names.keys.sorted().joined(separator: ", "))")
        }
        return p
    }

    func embed(_ texts: [String]) async throws -> [[Float]] {
        try texts.map { try embedOne($0).vector }
    }

    func embedReportingTruncation(_ texts: [String]) async throws -> EmbeddingBatch {
        try await embedReportingTruncation(texts) { _ in }
    }

    func embedReportingTruncation(_ texts: [String], progress: (Int) -> Void) async throws -> EmbeddingBatch {
        var vectors: [[Float]] = []
        var tokenCounts: [Int] = []
        vectors.reserveCapacity(texts.count)
        for text in texts {
            let one = try embedOne(text)
            vectors.append(one.vector)
            tokenCounts.append(one.tokens)
            progress(vectors.count)
        }
        return EmbeddingBatch(vectors: vectors, tokenCounts: tokenCounts)
    }

    /// The vector of `text` and the tokens it was read as.
    private func embedOne(_ text: String) throws -> (vector: [Float], tokens: Int) {
        lock.lock()
        defer { lock.unlock() }
        let tokens = try core.tokenize(text, addSpecial: true, parseSpecial: false)
        guard !tokens.isEmpty else { return ([Float](repeating: 0, count: dimension), 0) }
        guard tokens.count <= core.contextLength else {
            throw SanadError.promptTooLong(tokens: tokens.count, context: core.contextLength)
        }
        core.clearMemory()
        defer { core.clearMemory() }
        guard try core.decode(tokens, start: 0, output: { _ in true }) else { throw CancellationError() }
        let lib = core.library
        let vector =
            pooling == .none
            ? lib.getEmbeddingsIth(core.context, Int32(tokens.count - 1)) : lib.getEmbeddingsSeq(core.context, 0)
        guard let vector else {
            throw LlamaCppError.embeddingUnavailable(
                path: core.path, problem: "llama.cpp returned no embedding (pooling \(pooling.name))")
        }
        return (l2Normalized(Array(UnsafeBufferPointer(start: vector, count: dimension))), tokens.count)
    }
}
