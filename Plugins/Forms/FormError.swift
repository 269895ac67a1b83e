/// What went wrong in the forms plugin, in words that name the file, key, session or field and the fix.
public enum FormError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A template or lookup file is invalid; `keyPath` is like `conversationFlow.steps[2].expectedFields[0]`.
    case invalidTemplate(file: String, keyPath: String, problem: String)
    /// No template with this id.
    case unknownTemplate(id: String, known: [String])
    /// No session with this id in the store.
    case unknownSession(id: String, store: String)
    /// The store cannot be opened, read or written.
    case store(String)
    /// A backup file cannot be restored; nothing was changed.
    case invalidBackup(file: String, problem: String)
    /// The request does not fit the session's state (no field to go back to, an unknown field, …).
    case invalidRequest(String)

    public var description: String {
        switch self {
        case .invalidTemplate(let file, let keyPath, let problem):
            return "\(file)\(keyPath.isEmpty ? "" : ": " + keyPath): \(problem)"
        case .unknownTemplate(let id, let known):
            return "no form template '\(id)'; templates: \(known.joined(separator: ", "))"
        case .unknownSession(let id, let store):
            return "no form session '\(id)' in \(store); 'sanad form sessions' lists them"
        case .store(let message): return message
        case .invalidBackup(let file, let problem): return "\(file): not restored, nothing changed: \(problem)"
        case .invalidRequest(let message): return message
        }
    }
}
