import GGUF

/// The architectures the engine implements, keyed by `general.architecture`. Adding one: a file in Architectures/
/// with its configuration, its `DecoderArchitecture` and forward pass, and a line here (see Architectures/README.md).
public enum ArchitectureRegistry {
    /// Reads a model's weights from `file`; with `repackWeights`, regroups what the kernels read faster in another
    /// layout (Q4_1: `WeightLayout.q4_1Paired`) into private memory at load time.
    public typealias Loader = @Sendable (_ file: GGUFFile, _ repackWeights: Bool) throws -> any LanguageModel

    public static let architectures: [String: Loader] = [
        "llama": { try Decoder<Llama>(file: $0, repackWeights: $1) },
        "qwen2": { try Decoder<Qwen2>(file: $0, repackWeights: $1) },
        "qwen3": { try Decoder<Qwen3>(file: $0, repackWeights: $1) },
        "phi3": { try Decoder<Phi3>(file: $0, repackWeights: $1) },
        "gemma2": { try Decoder<Gemma2>(file: $0, repackWeights: $1) },
        "gemma3": { try Decoder<Gemma3>(file: $0, repackWeights: $1) },
    ]

    /// Supported architecture names, sorted.
    public static var supported: [String] { architectures.keys.sorted() }

    /// The model in `file`, or `PureSwiftError.unsupportedArchitecture` listing the supported ones. The file is
    /// first checked as every engine checks it (`ModelValidation`: plausible hyperparameters, consistent tokenizer
    /// and tensors), so an architecture's loader starts from a sane file.
    public static func load(_ file: GGUFFile, repackWeights: Bool = true) throws -> any LanguageModel {
        let name = try file.requireString("general.architecture")
        try ModelValidation.validate(file)
        guard let loader = architectures[name] else {
            throw PureSwiftError.unsupportedArchitecture(path: file.path, architecture: name, supported: supported)
        }
        return try loader(file, repackWeights)
    }
}
