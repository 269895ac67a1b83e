import GGUF
import PureSwiftKernels
import SanadCore
import SanadTokenizers

extension ArchitectureRegistry {
    /// Throws what loading `file` would refuse first for want of an implementation, without loading its weights:
    /// an architecture the engine lacks (`PureSwiftError.unsupportedArchitecture`), a tensor type without kernels
    /// (`.unsupportedTensorType`) or a tokenizer kind it does not implement (`TokenizerError`).
    public static func checkSupport(_ file: GGUFFile) throws {
        let name = try file.requireString("general.architecture")
        guard architectures[name] != nil else {
            throw PureSwiftError.unsupportedArchitecture(path: file.path, architecture: name, supported: supported)
        }
        if let tensor = file.tensors.first(where: { !WeightMatrix.supportedTypes.contains($0.type) }) {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: tensor.name, type: tensor.type.description,
                supported: WeightMatrix.supportedTypes.map(\.description))
        }
        _ = try Tokenizer.load(from: file)
    }

    /// What an engine built on this model code answers for `file`: unavailable here, lacking what `checkSupport`
    /// names (the reason without the file's path), or `detail`.
    public static func support(for file: GGUFFile, availability: BackendAvailability, detail: String) -> ModelSupport {
        if case .unavailable(let reason) = availability { return .cannot(reason: reason) }
        do { try checkSupport(file) } catch {
            return .cannot(reason: "\(error)".replacingOccurrences(of: "\(file.path): ", with: ""))
        }
        return .runs(detail: detail)
    }
}
