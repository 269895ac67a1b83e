/// What can go wrong with a vector index file. Every message names the file and says what to do.
public enum VectorIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read, written, synced or renamed.
    case io(path: String, operation: String, reason: String)
    /// The file is not an index, is cut short, or its checksum does not match its contents.
    case corrupt(path: String, what: String)
    /// A vector's length differs from the index's dimension.
    case dimensionMismatch(path: String, expected: Int, found: Int)
    /// The index holds another embedding model's vectors.
    case modelMismatch(path: String, index: String, given: String)
    /// A vector with a NaN or infinity, or all zeros.
    case invalidVector(id: String, what: String)

    public var description: String {
        switch self {
        case .io(let path, let operation, let reason):
            return "\(path): cannot \(operation): \(reason)"
        case .corrupt(let path, let what):
            return "\(path): not a usable vector index (\(what)); the file was cut short or changed outside Sanad — "
                + "restore it from a backup or delete it and add the texts again"
        case .dimensionMismatch(let path, let expected, let found):
            return "\(path): the index holds \(expected)-dimensional vectors but this one has \(found); use the "
                + "embedding model the index was made with, or a new index file"
        case .modelMismatch(let path, let index, let given):
            return "\(path): the index holds vectors of \(index), not of \(given); use the model it was made with "
                + "(-m), or a new index file"
        case .invalidVector(let id, let what):
            return "vector for '\(id)' \(what); embed the text again"
        }
    }
}
