/// The core's errors. Every message says what went wrong, where (file, key path, model, token count) and how to
/// fix it. Engines may throw their own error types; these are the ones the core and the CLI share.
public enum SanadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A config file is unreadable or invalid; `keyPath` is like `backends[1].id`.
    case invalidConfig(file: String, keyPath: String, problem: String)
    /// No engine/plugin is registered under this id.
    case unknownBackend(id: String, known: [String])
    case unknownPlugin(id: String, known: [String])
    /// None of the configured engines can run here.
    case noBackendAvailable(reasons: [String])
    /// The model file was not found.
    case modelNotFound(name: String, searched: [String])
    /// The prompt needs more tokens than the context holds.
    case promptTooLong(tokens: Int, context: Int)
    /// The estimated memory exceeds the tier's budget.
    case insufficientMemory(needed: Int, budget: Int, tier: String, suggestion: String)
    /// The model's chat template is not one Sanad knows.
    case unknownChatTemplate(excerpt: String, known: [String])
    /// The model uses an architecture or tensor type the engine lacks.
    case unsupportedModel(path: String, problem: String)
    /// The engine could not be used (library missing, wrong build, …).
    case backendUnavailable(id: String, reason: String)
    /// Anything else an engine reports, already worded for the user.
    case engine(String)
    /// A JSON file is not strict JSON (`StrictJSON`): where (1-based line and column) and what.
    case invalidJSON(line: Int, column: Int, problem: String)

    public var description: String {
        switch self {
        case .invalidConfig(let file, let keyPath, let problem):
            return keyPath.isEmpty ? "\(file): \(problem)" : "\(file): \(keyPath): \(problem)"
        case .unknownBackend(let id, let known):
            return "unknown backend '\(id)'; known backends: \(known.joined(separator: ", "))"
        case .unknownPlugin(let id, let known):
            return "unknown plugin '\(id)'; known plugins: \(known.joined(separator: ", "))"
        case .noBackendAvailable(let reasons):
            return "no configured backend is available:\n" + reasons.map { "  - " + $0 }.joined(separator: "\n")
        case .modelNotFound(let name, let searched):
            return "model '\(name)' not found (looked in: \(searched.joined(separator: ", "))); run scripts/setup "
                + "to fetch the models, or pass a path with -m"
        case .promptTooLong(let tokens, let context):
            return "the prompt is \(tokens) tokens but the context holds \(context); shorten it, raise the context "
                + "(-c), or ask for truncation (--truncate)"
        case .insufficientMemory(let needed, let budget, let tier, let suggestion):
            return "the model needs about \(formatMiB(needed)) but tier '\(tier)' allows \(formatMiB(budget)); "
                + suggestion
        case .unknownChatTemplate(let excerpt, let known):
            return "the model's chat template is not a known family (starts with: \(excerpt.debugDescription)); "
                + "known: \(known.joined(separator: ", ")); pass --chat-template NAME or a .jinja file"
        case .unsupportedModel(let path, let problem):
            return "\(path): \(problem)"
        case .backendUnavailable(let id, let reason):
            return "backend '\(id)' is unavailable: \(reason)"
        case .engine(let message):
            return message
        case .invalidJSON(let line, let column, let problem):
            return "invalid JSON at line \(line), column \(column): \(problem)"
        }
    }
}

/// `12.3 MiB`.
public func formatMiB(_ bytes: Int) -> String {
    let mib = Double(bytes) / 1_048_576
    return mib >= 100 ? "\(Int(mib.rounded())) MiB" : "\((mib * 10).rounded() / 10) MiB"
}
