/// Why a vocabulary could not be loaded from a GGUF file. Every message names the file and the metadata key, and
/// says what to do.
public enum TokenizerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key the tokenizer needs is missing.
    case missingKey(path: String, key: String)
    /// A key has the wrong type (for example `tokenizer.ggml.scores` that is not a numeric array).
    case wrongType(path: String, key: String, expected: String)
    /// `tokenizer.ggml.model` names a tokenizer this engine does not implement.
    case unsupportedModel(path: String, model: String, supported: [String])
    /// `tokenizer.ggml.pre` names a pre-tokenizer this engine does not implement (byte-level BPE only).
    case unsupportedPreTokenizer(path: String, preTokenizer: String, supported: [String])
    /// The arrays disagree (fewer scores or types than tokens, a duplicate token text, …).
    case inconsistent(path: String, key: String, what: String)

    public var description: String {
        switch self {
        case .missingKey(let path, let key):
            return "'\(path)' lacks the tokenizer key '\(key)'; the file has no usable vocabulary — re-convert the "
                + "model with a current llama.cpp convert_hf_to_gguf.py"
        case .wrongType(let path, let key, let expected):
            return "'\(path)': tokenizer key '\(key)' is not \(expected) — the file is damaged or was written by "
                + "a broken converter; re-convert it"
        case .unsupportedModel(let path, let model, let supported):
            return "'\(path)': tokenizer.ggml.model '\(model)' is not supported by the pure-Swift engine "
                + "(supported: \(supported.joined(separator: ", "))); use the llama.cpp engine for this model"
        case .unsupportedPreTokenizer(let path, let pre, let supported):
            return "'\(path)': tokenizer.ggml.pre '\(pre)' is not supported by the pure-Swift engine "
                + "(supported: \(supported.joined(separator: ", "))); use the llama.cpp engine for this model"
        case .inconsistent(let path, let key, let what):
            return "'\(path)': tokenizer key '\(key)': \(what) — the file is damaged; fetch or convert it again"
        }
    }
}
