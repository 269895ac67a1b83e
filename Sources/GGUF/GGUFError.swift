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
    /// A well-formed value that no real model has (`block_count` 2^40, a negative epsilon); `problem` gives the
    /// plausible range.
    case implausible(path: String, key: String, value: String, problem: String)
    /// Parts of the file that contradict each other (a vocabulary of 1000 tokens against an embedding of 49152
    /// rows, a tensor whose declared type does not fit its data).
    case inconsistent(path: String, what: String)

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
        case .implausible(let path, let key, let value, let problem):
            return "\(key) \(value) in '\(path)' is not plausible: \(problem) — the file is damaged or was converted "
                + "wrongly; fetch or convert it again"
        case .inconsistent(let path, let what):
            return "'\(path)' is inconsistent: \(what) — the file is damaged or was converted wrongly; fetch or "
                + "convert it again"
        }
    }
}
