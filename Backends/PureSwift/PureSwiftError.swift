/// What can go wrong while the pure-Swift engine loads or runs a model. Each message names the file and the
/// architecture, key or tensor at fault, and what would work instead.
public enum PureSwiftError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `general.architecture` names an architecture the engine has no implementation for.
    case unsupportedArchitecture(path: String, architecture: String, supported: [String])
    /// A tensor is stored in a ggml type the engine has no kernel for.
    case unsupportedTensorType(path: String, tensor: String, type: String, supported: [String])
    /// A tensor has a shape the architecture does not expect.
    case badTensorShape(path: String, tensor: String, expected: String, found: [Int])
    /// A hyperparameter is missing, out of range or inconsistent with others.
    case badHyperparameter(path: String, key: String, problem: String)
    /// A model feature the engine does not implement (mixture of experts, a RoPE scaling kind, …).
    case unsupportedFeature(path: String, feature: String)
    /// A token id outside the vocabulary was given as input.
    case tokenOutOfRange(token: Int32, vocabularySize: Int)

    public var description: String {
        switch self {
        case .unsupportedArchitecture(let path, let architecture, let supported):
            return "\(path): architecture '\(architecture)' is not supported by the pure-Swift engine (supported: "
                + "\(supported.joined(separator: ", "))); use another backend (--backend llama) or another model"
        case .unsupportedTensorType(let path, let tensor, let type, let supported):
            return "\(path): tensor '\(tensor)' is stored as \(type), which the pure-Swift engine cannot compute "
                + "with (supported: \(supported.joined(separator: ", "))); use a model quantized to a supported type "
                + "or another backend"
        case .badTensorShape(let path, let tensor, let expected, let found):
            return "\(path): tensor '\(tensor)' has shape \(found), expected \(expected) — the file does not match "
                + "its own metadata; re-convert or fetch it again"
        case .badHyperparameter(let path, let key, let problem):
            return "\(path): metadata '\(key)' \(problem)"
        case .unsupportedFeature(let path, let feature):
            return "\(path): \(feature) is not supported by the pure-Swift engine; use another backend (--backend "
                + "llama)"
        case .tokenOutOfRange(let token, let vocabularySize):
            return "token id \(token) is outside the model's vocabulary (0..<\(vocabularySize))"
        }
    }
}
