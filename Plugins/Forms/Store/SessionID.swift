/// The one rule for form session ids, applied wherever an id enters: `start --id`, `resume` and every other by-id
/// read or write of a store, restore (single backups and archives) and archive creation. An id names files in backup
/// archives (`sessions/ID.json`) and is printed to terminals, so it must be short, plain and not a path component.
public enum SessionID {
    /// The longest id accepted.
    public static let maxLength = 64

    /// Why `id` is not a session id, or nil when it is one: 1 to 64 ASCII letters, digits, `-`, `_` or `.`,
    /// starting with a letter or digit (so never `.`, `..`, a hidden name or an option-like `-x`).
    public static func problem(_ id: String) -> String? {
        let rule = "use 1 to \(maxLength) ASCII letters, digits, '-', '_' or '.', starting with a letter or digit"
        guard !id.isEmpty else { return "the session id is empty; \(rule)" }
        guard id.utf8.count <= maxLength else {
            return "the session id \(TerminalText.quoted(id)) is \(id.utf8.count) bytes long; \(rule)"
        }
        let allowed = id.utf8.allSatisfy { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }
        guard allowed, let first = id.utf8.first, isAlphanumeric(first) else {
            return "\(TerminalText.quoted(id)) is not a session id; \(rule)"
        }
        return nil
    }

    /// Throws `FormError.invalidRequest` with `problem(id)` when `id` breaks the rule.
    public static func validate(_ id: String) throws {
        if let problem = problem(id) { throw FormError.invalidRequest(problem) }
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
    }
}
