import GGUF

/// The architectures the engine implements, keyed by `general.architecture`. Adding one: a file in Architectures/
/// with its configuration and forward pass, and a line here (see Architectures/README.md).
public enum ArchitectureRegistry {
    public typealias Loader = @Sendable (GGUFFile) throws -> any LanguageModel

    public static let architectures: [String: Loader] = [
        "llama": { try LlamaModel(file: $0) }
    ]

    /// Supported architecture names, sorted.
    public static var supported: [String] { architectures.keys.sorted() }

    /// The model in `file`, or `PureSwiftError.unsupportedArchitecture` listing the supported ones.
    public static func load(_ file: GGUFFile) throws -> any LanguageModel {
        let name = try file.requireString("general.architecture")
        guard let loader = architectures[name] else {
            throw PureSwiftError.unsupportedArchitecture(path: file.path, architecture: name, supported: supported)
        }
        return try loader(file)
    }
}
