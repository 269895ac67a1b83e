import Foundation
import GGUF
// The engine's kernels are part of its API (WeightMatrix, matmul, …); re-exported so that importers of the engine
// see them.
@_exported import PureSwiftKernels
import SanadCore
import SanadTokenizers

/// The always-available engine: a pure-Swift CPU transformer reading GGUF files in place (memory-mapped), and
/// BERT sentence embeddings from safetensors (`PureSwiftEmbeddingModel`).
public struct PureSwiftBackend: OptionsValidatingBackend, EmbeddingBackend {
    public init() {}
    public var id: String { "pure-swift" }
    public var summary: String {
        "pure-Swift CPU transformer (GGUF: \(ArchitectureRegistry.supported.joined(separator: ", ")); "
            + "embeddings: sentence-transformers BERT folders; always available)"
    }
    public var availability: BackendAvailability { availability(options: [:]) }

    /// Unavailable when the options are wrong or the kernel build they (or `SANAD_KERNELS`) name cannot run here,
    /// so a config falls back to its next engine instead of failing at load.
    public func availability(options: [String: JSONValue]) -> BackendAvailability {
        do {
            let kernels = try PureSwiftOptions(parsing: options).selectKernels()
            return .available(
                detail: "built in; kernels: \(kernels.name) (this CPU runs "
                    + KernelBuilds.runnable.map(\.name).joined(separator: ", ") + "; SANAD_KERNELS picks one)")
        } catch {
            return .unavailable(reason: "\(error)")
        }
    }

    /// Runs when the kernel build is available here and the file's architecture, tensor types and tokenizer are
    /// ones the engine implements (`ArchitectureRegistry.checkSupport`).
    public func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport {
        ArchitectureRegistry.support(
            for: model, availability: availability(options: options),
            detail: "exact vs llama.cpp's AVX2 arithmetic on every kernel build")
    }

    public func validateOptions(_ options: [String: JSONValue]) throws {
        _ = try PureSwiftOptions(parsing: options)
    }

    public func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession {
        try PureSwiftSession(path: url.path, options: options)
    }

    /// One model and runner for `count` sessions, whose concurrent generations are batched
    /// (`PureSwiftSession.sharing`).
    public func loadModels(at url: URL, options: ModelLoadOptions, count: Int) async throws -> [any InferenceSession] {
        try PureSwiftSession.sharing(count: count, path: url.path, options: options)
    }

    public var sharesForwardPasses: Bool { true }

    /// A sentence-transformers BERT folder (config.json, model.safetensors, tokenizer.json, vocab.txt).
    public func loadEmbeddingModel(at url: URL, options: ModelLoadOptions) async throws -> any EmbeddingModel {
        try PureSwiftEmbeddingModel(at: url, options: options)
    }
}
