/// Errors of the BLAS engine, worded for the user: what failed, where, and how to fix it.
public enum BLASError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No usable CBLAS library (missing, not a CBLAS library, a 64-bit-integer build); `reason` says which and how to
    /// install one.
    case libraryUnavailable(String)
    /// An engine option has a value the engine cannot use.
    case invalidOption(key: String, problem: String)

    /// The message without the leading engine name.
    public var reason: String {
        switch self {
        case .libraryUnavailable(let reason):
            return reason
        case .invalidOption(let key, let problem):
            return "engine option \"\(key)\": \(problem); fix the option in the host config (backends[].options)"
        }
    }

    public var description: String { "blas: " + reason }
}
