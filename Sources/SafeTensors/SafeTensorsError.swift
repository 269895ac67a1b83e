/// Everything that can go wrong while opening or reading a safetensors file. Every case names the file (and the
/// tensor where there is one), and `description` says how to fix it.
public enum SafeTensorsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or mapped (missing, unreadable, not a regular file…).
    case cannotOpen(path: String, reason: String)
    /// The file ends before a structure the header promises.
    case truncated(path: String, what: String)
    /// The JSON header is not what the format says (bad length, not JSON, wrong shape).
    case malformedHeader(path: String, what: String)
    /// One tensor's entry is impossible (shape, offsets, overlap).
    case malformedTensor(path: String, tensor: String, what: String)
    /// A dtype this reader does not know, or one it knows but cannot turn into floats.
    case unsupportedDType(path: String, tensor: String, dtype: String)
    /// A tensor the caller needs is missing.
    case missingTensor(path: String, name: String)
    /// A tensor has a different shape than the caller needs.
    case wrongShape(path: String, tensor: String, expected: [Int], found: [Int])

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            return "cannot open safetensors file '\(path)': \(reason)"
        case .truncated(let path, let what):
            return "'\(path)' is truncated: \(what) — the download or copy is incomplete; fetch the file again"
        case .malformedHeader(let path, let what):
            return "'\(path)' is not a valid safetensors file: \(what) — fetch the file again or re-export it"
        case .malformedTensor(let path, let tensor, let what):
            return "'\(path)' is corrupt: tensor '\(tensor)' \(what) — fetch the file again or re-export it"
        case .unsupportedDType(let path, let tensor, let dtype):
            return "'\(path)': tensor '\(tensor)' has dtype \(dtype); Sanad reads F32, F16 and BF16 weights — "
                + "re-export the model in one of those"
        case .missingTensor(let path, let name):
            return "'\(path)' lacks the tensor '\(name)' — is it the model the configuration names?"
        case .wrongShape(let path, let tensor, let expected, let found):
            return "'\(path)': tensor '\(tensor)' has shape \(found), expected \(expected) — the weights do not "
                + "match the model's config.json"
        }
    }
}
