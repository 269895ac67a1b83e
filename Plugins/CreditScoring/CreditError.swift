/// Why a credit-scoring step failed, in words a person can act on.
public enum CreditError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A line or record of the input that is not a message (`line 12: no date at the start`).
    case malformedInput(line: Int, reason: String)
    /// A file or folder that cannot be read or written.
    case io(String)
    /// A signed record that is malformed or does not verify.
    case record(String)
    /// A native library (libcrypto, libpq) is missing or failed.
    case native(String)
    /// The analysis was cancelled; nothing was produced.
    case cancelled

    public var description: String {
        switch self {
        case .malformedInput(let line, let reason):
            return "line \(line): \(reason) (fix the input, or pass --skip-bad to skip such lines and report them)"
        case .cancelled: return "cancelled; no result was written"
        case .io(let text), .record(let text), .native(let text): return text
        }
    }
}
