import SanadCore

/// The llama engine's options, from the host config's `backends[].options` (or `ModelLoadOptions.engineOptions`).
/// Unknown keys and wrong types are errors that name the key.
public struct LlamaOptions: Sendable, Equatable {
    /// The keys the engine reads.
    public static let keys = ["library", "template", "pooling"]
    /// Pooling names for embedding models.
    public static let poolingNames = ["cls", "last", "mean"]

    /// A libllama path that takes precedence over `SANAD_LIBLLAMA` and the loader's search.
    public var library: String?
    /// A chat template (llama.cpp's built-in name or Jinja text) instead of the model's own.
    public var template: String?
    /// Embedding pooling: `mean`, `cls` or `last`; nil = the model's.
    public var pooling: String?

    public init(library: String? = nil, template: String? = nil, pooling: String? = nil) {
        self.library = library
        self.template = template
        self.pooling = pooling
    }

    /// Reads `options`; throws `LlamaCppError.invalidOption` naming the key for an unknown key or a wrong value.
    public init(parsing options: [String: JSONValue]) throws {
        self.init()
        let reader = try OptionReader(options, allowed: Self.keys) { key, problem in
            LlamaCppError.invalidOption(key: key, problem: problem)
        }
        library = try reader.string("library", expected: "a path string")
        template = try reader.string("template")
        pooling = try reader.choice("pooling", of: Self.poolingNames)
    }
}
