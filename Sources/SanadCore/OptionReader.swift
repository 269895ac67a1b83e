/// Reads an `options` object from a config (an engine's `backends[].options`, a plugin's `plugins[].options`)
/// strictly: an unknown key, a wrong type or a value out of range is an error that names the key. The caller says how
/// an error is worded for its users (`fail(key, problem)`), so every engine and plugin reads options the same way and
/// words the failure in its own error type.
public struct OptionReader: Sendable {
    public let options: [String: JSONValue]
    private let fail: @Sendable (_ key: String, _ problem: String) -> any Error

    /// Fails when `options` has a key that is not in `allowed` ("unknown option; valid options: …").
    public init(
        _ options: [String: JSONValue], allowed: [String],
        fail: @escaping @Sendable (_ key: String, _ problem: String) -> any Error
    ) throws {
        self.options = options
        self.fail = fail
        for key in options.keys.sorted() where !allowed.contains(key) {
            throw fail(key, "unknown option; valid options: \(allowed.joined(separator: ", "))")
        }
    }

    /// The error for `key` with `problem`, worded by the caller.
    public func failure(_ key: String, _ problem: String) -> any Error { fail(key, problem) }

    /// The value of `key`; nil when absent or `null`.
    public func value(_ key: String) -> JSONValue? {
        guard let value = options[key], value != .null else { return nil }
        return value
    }

    /// A string; `expected` words what belongs there ("a path string").
    public func string(_ key: String, expected: String = "a string") throws -> String? {
        guard let value = value(key) else { return nil }
        guard let s = value.stringValue else { throw fail(key, "expected \(expected), found \(value)") }
        return s
    }

    /// A string that must be one of `choices`.
    public func choice(_ key: String, of choices: [String]) throws -> String? {
        guard let s = try string(key) else { return nil }
        guard choices.contains(s) else {
            throw fail(key, "got \"\(s)\", expected one of \(choices.joined(separator: ", "))")
        }
        return s
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard let flag = value.boolValue else { throw fail(key, "expected true or false, found \(value)") }
        return flag
    }

    /// A whole number in `range`. With `expected` ("a whole number of tokens ≥ 1") both failures say that;
    /// without it they say "expected an integer" and "must be in a…b".
    public func int(_ key: String, range: ClosedRange<Int>, expected: String? = nil) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard let i = value.intValue else { throw fail(key, "expected \(expected ?? "an integer"), found \(value)") }
        guard range.contains(i) else {
            throw fail(
                key,
                expected.map { "expected \($0), found \(i)" }
                    ?? "must be in \(range.lowerBound)…\(range.upperBound), found \(i)")
        }
        return i
    }
}
