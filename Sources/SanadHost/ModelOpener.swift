import Foundation
import GGUF
import SanadCore

/// What a command asks for when it opens a model; every field left nil takes the host config's value.
public struct ModelRequest: Sendable, Equatable {
    /// A `.gguf` path, or a file name in the models folder; nil = the config's model.
    public var model: String?
    /// An engine id; nil = the first available engine of the config's preference list.
    public var backend: String?
    public var threads: Int?
    /// Context length (KV cache size); nil = the config's.
    public var contextLength: Int?
    public var batchSize: Int?
    public var seed: UInt64?
    /// Refuse a load whose estimate exceeds the tier's budget (`--no-memory-check` turns it off).
    public var checkMemory: Bool
    /// Allow a context beyond the model's training context (`--allow-long-context`).
    public var allowLongContext: Bool
    /// The KV cache's key and value types (`--cache-type-k/-v`); nil = the config's.
    public var cacheTypeK: GGMLType?
    public var cacheTypeV: GGMLType?

    public init(
        model: String? = nil, backend: String? = nil, threads: Int? = nil, contextLength: Int? = nil,
        batchSize: Int? = nil, seed: UInt64? = nil, checkMemory: Bool = true, allowLongContext: Bool = false,
        cacheTypeK: GGMLType? = nil, cacheTypeV: GGMLType? = nil
    ) {
        self.cacheTypeK = cacheTypeK
        self.cacheTypeV = cacheTypeV
        self.model = model
        self.backend = backend
        self.threads = threads
        self.contextLength = contextLength
        self.batchSize = batchSize
        self.seed = seed
        self.checkMemory = checkMemory
        self.allowLongContext = allowLongContext
    }
}

/// A model ready to load: the file, the engine (and why earlier ones were skipped), the load options and the
/// memory estimate they were checked with.
public struct ModelPlan: Sendable {
    public var url: URL
    public var backend: any InferenceBackend
    /// `id: reason` for each engine of the preference list skipped before `backend`.
    public var skipped: [String]
    public var options: ModelLoadOptions
    public var estimate: MemoryEstimate
    /// The model's training context, when its metadata states one.
    public var trainingContextLength: Int?
    /// The parsed model file, held so that the engine's load gets it from `GGUFFile.shared(path:)` (not parsed
    /// again).
    public var file: GGUFFile
}

/// The one way a model is opened: resolve the model → pick the engine by config (with the reasons others were
/// skipped) → check the context against the model's training context and the memory estimate against the tier's
/// budget → load.
public struct ModelOpener: Sendable {
    public let registry: BackendRegistry
    /// The config in force.
    public let config: HostConfiguration
    /// Every tier config (for the "which tier fits" suggestion of a refused load).
    public let tiers: [HostConfiguration]
    public let modelsDirectory: URL

    public init(registry: BackendRegistry, config: HostConfiguration, tiers: [HostConfiguration], modelsDirectory: URL)
    {
        self.registry = registry
        self.config = config
        self.tiers = tiers
        self.modelsDirectory = modelsDirectory
    }

    /// A model path: a name containing `/` is a path as given, an existing path given explicitly too; else a file
    /// name in the models folder; nil = the config's model.
    public func resolveModel(_ nameOrPath: String?) throws -> URL {
        let name = nameOrPath ?? config.model
        let direct = URL(fileURLWithPath: name)
        if name.contains("/") || FileManager.default.fileExists(atPath: direct.path) && nameOrPath != nil {
            guard FileManager.default.fileExists(atPath: direct.path) else {
                throw SanadError.modelNotFound(name: name, searched: [direct.path])
            }
            return direct
        }
        let inFolder = modelsDirectory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: inFolder.path) else {
            throw SanadError.modelNotFound(name: name, searched: [modelsDirectory.path])
        }
        return inFolder
    }

    /// The config's options for engine `id` (empty when the config does not list it).
    public func engineOptions(_ id: String) -> [String: JSONValue] {
        config.backends.first { $0.id == id }?.options ?? [:]
    }

    /// Engine `id` when it is available with the config's options for it, or the first available one of the
    /// config's preference list with the reasons the earlier ones were skipped.
    public func chooseBackend(_ id: String?) throws -> (backend: any InferenceBackend, skipped: [String]) {
        if let id {
            let b = try registry.backend(id)
            if case .unavailable(let reason) = b.availability(options: engineOptions(id)) {
                throw SanadError.backendUnavailable(id: id, reason: reason)
            }
            return (b, [])
        }
        return try registry.firstAvailable(config.backends)
    }

    /// Load options for engine `backend`: the config's, overridden by the request.
    public func loadOptions(backend: String, request: ModelRequest) -> ModelLoadOptions {
        ModelLoadOptions(
            threads: request.threads ?? config.threads ?? CPUAvailability.defaultThreads,
            contextLength: request.contextLength ?? config.contextLength,
            batchSize: request.batchSize ?? config.batchSize, seed: request.seed ?? 0xC0FFEE,
            engineOptions: engineOptions(backend), cacheTypeK: request.cacheTypeK ?? config.cacheTypeK,
            cacheTypeV: request.cacheTypeV ?? config.cacheTypeV)
    }

    /// The memory `model` needs at `contextLength` with what `backend` adds under the config's options for it, with
    /// the KV cache stored as `cacheTypes` (default: the config's).
    public func estimate(
        model file: GGUFFile, contextLength: Int, batchSize: Int? = nil, backend: (any InferenceBackend)?,
        cacheTypes: (k: GGMLType, v: GGMLType)? = nil
    ) throws -> MemoryEstimate {
        let engine = backend.flatMap { $0.additionalMemory(model: file, options: engineOptions($0.id)) }
        let cache = cacheTypes ?? (config.cacheTypeK, config.cacheTypeV)
        return MemoryEstimate(
            model: try ModelSummary(file: file), contextLength: contextLength, batchSize: batchSize ?? config.batchSize,
            cacheTypeK: cache.k, cacheTypeV: cache.v, engine: engine)
    }

    /// Resolves, picks and checks everything short of loading. Throws `modelNotFound`, `unknownBackend`,
    /// `backendUnavailable`, `noBackendAvailable`, `HostError.contextBeyondTraining` (unless
    /// `allowLongContext`) or `insufficientMemory` (unless `checkMemory` is off).
    public func plan(_ request: ModelRequest) throws -> ModelPlan {
        let url = try resolveModel(request.model)
        // Parsed first: the default thread count's CPU sample (`CPUAvailability.current`) runs meanwhile.
        let file = try GGUFFile.shared(path: url.path)
        let summary = try ModelSummary(file: file)
        let (backend, skipped) = try chooseBackend(request.backend)
        let options = loadOptions(backend: backend.id, request: request)
        let context = options.contextLength ?? config.contextLength
        if let training = summary.trainingContextLength, training > 0, context > training, !request.allowLongContext {
            throw HostError.contextBeyondTraining(model: url.lastPathComponent, context: context, training: training)
        }
        let estimate = try self.estimate(
            model: file, contextLength: context, batchSize: options.batchSize, backend: backend,
            cacheTypes: (options.cacheTypeK, options.cacheTypeV))
        if request.checkMemory { try estimate.check(against: config, allTiers: tiers) }
        return ModelPlan(
            url: url, backend: backend, skipped: skipped, options: options, estimate: estimate,
            trainingContextLength: summary.trainingContextLength, file: file)
    }

    /// Loads a planned model.
    public func open(_ plan: ModelPlan) async throws -> any InferenceSession {
        try await plan.backend.loadModel(at: plan.url, options: plan.options)
    }

    /// `count` sessions of a planned model for requests served at the same time (`InferenceBackend.loadModels`).
    public func open(_ plan: ModelPlan, count: Int) async throws -> [any InferenceSession] {
        try await plan.backend.loadModels(at: plan.url, options: plan.options, count: count)
    }
}

/// The host's own errors (config and engine errors are `SanadError`s).
public enum HostError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The context asked for is longer than the model was trained on.
    case contextBeyondTraining(model: String, context: Int, training: Int)

    public var description: String {
        switch self {
        case .contextBeyondTraining(let model, let context, let training):
            return "a context of \(context) tokens is beyond \(model)'s training context of \(training); the "
                + "model's output past \(training) tokens is unreliable and Sanad applies no RoPE scaling. Lower "
                + "the context (-c \(training)) or pass --allow-long-context to run it anyway"
        }
    }
}
