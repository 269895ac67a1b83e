/// Errors of the llama.cpp backend, worded for the user: what failed, where, and how to fix it.
public enum LlamaCppError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No usable libllama (missing, not loadable, or not the b11434 build); `reason` says which and how to install.
    case libraryUnavailable(String)
    /// `llama_model_load_from_file` returned NULL; `libllamaSaid` holds its last warning and error log lines.
    case modelLoadFailed(path: String, libllamaSaid: [String])
    /// `llama_init_from_model` returned NULL.
    case contextCreationFailed(path: String, contextLength: Int)
    /// `llama_decode` failed with `code` while evaluating tokens at `position`.
    case decodeFailed(code: Int32, position: Int)
    /// A token id outside the vocabulary.
    case invalidToken(id: Int32, vocabularySize: Int)
    /// An engine option has a value the backend cannot use.
    case invalidOption(key: String, problem: String)
    /// `llama_sampler_init_grammar` refused a grammar; `libllamaSaid` holds its last log lines.
    case grammarRefused(libllamaSaid: [String])
    /// The context returned no embedding.
    case embeddingUnavailable(path: String, problem: String)

    /// The message without the leading engine name.
    public var reason: String {
        switch self {
        case .libraryUnavailable(let reason):
            return reason
        case .modelLoadFailed(let path, let said) where !said.isEmpty:
            return "libllama could not load \(path); it reported: " + said.joined(separator: " / ")
        case .modelLoadFailed(let path, _):
            return "libllama could not load \(path) (not a GGUF file, an architecture this build lacks, or out of "
                + "memory); run with SANAD_LLAMA_LOG=1 to see llama.cpp's own message"
        case .contextCreationFailed(let path, let contextLength):
            return "libllama could not create a context of \(contextLength) tokens for \(path) (out of memory?); "
                + "lower the context with -c, or run with SANAD_LLAMA_LOG=1 for llama.cpp's message"
        case .decodeFailed(let code, let position):
            return "llama_decode failed with code \(code) at position \(position); run with SANAD_LLAMA_LOG=1 for "
                + "llama.cpp's message"
        case .invalidToken(let id, let vocabularySize):
            return "token id \(id) is outside the vocabulary (0..<\(vocabularySize))"
        case .invalidOption(let key, let problem):
            return "engine option \"\(key)\": \(problem)"
        case .grammarRefused(let said):
            return "libllama refused the grammar (nothing was generated)"
                + (said.isEmpty
                    ? "; run with SANAD_LLAMA_LOG=1 for llama.cpp's message" : ": " + said.joined(separator: " / "))
        case .embeddingUnavailable(let path, let problem):
            return "\(path): \(problem)"
        }
    }

    public var description: String { "llama: " + reason }
}
