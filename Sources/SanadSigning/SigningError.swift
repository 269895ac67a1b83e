/// Why hashing, signing or a key failed, in words a person can act on.
public enum SigningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key file or another file that cannot be read or written.
    case io(String)
    /// libcrypto is missing or one of its calls failed.
    case native(String)
    /// A value that has no canonical form (a non-finite number).
    case value(String)

    public var description: String {
        switch self {
        case .io(let text), .native(let text), .value(let text): return text
        }
    }
}
