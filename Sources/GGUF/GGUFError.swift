/// Everything that can go wrong while opening or reading a GGUF file. Every case names the file and what is wrong,
/// and `description` says how to fix it where there is something the user can do.
public enum GGUFError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or mapped (missing, unreadable, a directory…).
    case cannotOpen(path: String, reason: String)
    /// The file does not start with the `GGUF` magic.
    case notGGUF(path: String)
    /// A GGUF version this reader does not know (it reads 2 and 3).
    case unsupportedVersion(path: String, version: UInt32)
    /// The file ends before a structure that the header promises.
    case truncated(path: String, offset: Int, needed: Int, what: String)
    /// A count, length, type or offset in the file is impossible.
    case malformed(path: String, offset: Int, what: String)
    /// A metadata key the caller needs is missing.
    case missingKey(path: String, key: String)
    /// A metadata key has a different type than the caller needs.
    case wrongKeyType(path: String, key: String, expected: String, found: String)
    /// A tensor the caller needs is missing.
    case missingTensor(path: String, name: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            return "cannot open GGUF file '\(path)': \(reason)"
        case .notGGUF(let path):
            return "'\(path)' is not a GGUF file (it does not start with the magic 'GGUF'); pass a .gguf model file"
        case .unsupportedVersion(let path, let version):
            return "'\(path)' is GGUF version \(version); Sanad reads versions 2 and 3 — re-convert the model with a "
                + "current llama.cpp"
        case .truncated(let path, let offset, let needed, let what):
            return "'\(path)' is truncated: \(what) needs \(needed) bytes at offset \(offset) beyond the end of the "
                + "file — the download or copy is incomplete; fetch the file again (scripts/setup verifies hashes)"
        case .malformed(let path, let offset, let what):
            return "'\(path)' is corrupt at offset \(offset): \(what) — fetch the file again"
        case .missingKey(let path, let key):
            return "'\(path)' lacks the metadata key '\(key)'"
        case .wrongKeyType(let path, let key, let expected, let found):
            return "'\(path)': metadata key '\(key)' is \(found), expected \(expected)"
        case .missingTensor(let path, let name):
            return "'\(path)' lacks the tensor '\(name)'"
        }
    }
}
