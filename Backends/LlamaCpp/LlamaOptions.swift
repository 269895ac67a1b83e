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
        for key in options.keys.sorted() where !Self.keys.contains(key) {
            throw LlamaCppError.invalidOption(
                key: key, problem: "unknown option; the llama engine reads: \(Self.keys.joined(separator: ", "))")
        }
        func string(_ key: String) throws -> String? {
            guard let value = options[key] else { return nil }
            guard let s = value.stringValue else {
                throw LlamaCppError.invalidOption(key: key, problem: "expected a string, got \(value)")
            }
            return s
        }
        library = try string("library")
        template = try string("template")
        pooling = try string("pooling")
        if let pooling, !Self.poolingNames.contains(pooling) {
            throw LlamaCppError.invalidOption(
                key: "pooling",
                problem: "got \"\(pooling)\", expected one of \(Self.poolingNames.joined(separator: ", "))")
        }
    }
}
