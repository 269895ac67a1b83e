/// An engine in a preference list with its options from the host config (for example
/// `{"library": "/opt/lib/libllama.so"}`) and why it stands at its place in the list (`why`, shown by `sanad config`;
/// measurements belong there).
public struct BackendChoice: Sendable, Equatable {
    public var id: String
    public var options: [String: JSONValue]
    public var why: String?

    public init(id: String, options: [String: JSONValue] = [:], why: String? = nil) {
        self.id = id
        self.options = options
        self.why = why
    }
}

/// Registry entries: ids mapped to factories. The CLI is the only place that fills them; configs refer to ids.
public struct BackendRegistry: Sendable {
    public let inference: [String: any InferenceBackend]
    public let embedding: [String: any EmbeddingBackend]

    public init(inference: [any InferenceBackend], embedding: [any EmbeddingBackend] = []) {
        var table: [String: any InferenceBackend] = [:]
        for b in inference { table[b.id] = b }
        self.inference = table
        var e: [String: any EmbeddingBackend] = [:]
        for b in embedding { e[b.id] = b }
        self.embedding = e
    }

    /// Inference backend ids, sorted.
    public var inferenceIDs: [String] { inference.keys.sorted() }
    public var embeddingIDs: [String] { embedding.keys.sorted() }

    public func backend(_ id: String) throws -> any InferenceBackend {
        guard let b = inference[id] else { throw SanadError.unknownBackend(id: id, known: inferenceIDs) }
        return b
    }

    /// The first available backend of `preference`, with the reasons the earlier ones were skipped.
    public func firstAvailable(_ preference: [String]) throws -> (backend: any InferenceBackend, skipped: [String]) {
        try firstAvailable(preference.map { BackendChoice(id: $0) })
    }

    /// The first backend of a config's preference list that is available with its options, with the reasons the
    /// earlier ones were skipped.
    public func firstAvailable(_ preference: [BackendChoice]) throws -> (
        backend: any InferenceBackend, skipped: [String]
    ) {
        var skipped: [String] = []
        for choice in preference {
            let id = choice.id
            let b = try backend(id)
            switch b.availability(options: choice.options) {
            case .available: return (b, skipped)
            case .unavailable(let reason): skipped.append("\(id): \(reason)")
            }
        }
        throw SanadError.noBackendAvailable(reasons: skipped)
    }
}

/// An engine whose host-config options are typed: the host checks them when it loads a config, so a wrong option
/// is reported with its key path before any model is loaded.
public protocol OptionsValidatingBackend: InferenceBackend {
    /// Throws an error naming the option when `options` is not valid for this engine.
    func validateOptions(_ options: [String: JSONValue]) throws
}

extension BackendRegistry {
    /// Checks `options` for engine `id` when the engine's options are typed; nothing otherwise.
    public func validateOptions(id: String, options: [String: JSONValue]) throws {
        if let engine = inference[id] as? any OptionsValidatingBackend { try engine.validateOptions(options) }
    }
}
