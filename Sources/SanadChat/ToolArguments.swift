import SanadCore

/// Reads an arguments object strictly for a tool: unknown keys and wrong types name the argument.
public struct ToolArguments: Sendable {
    public let tool: String
    public let values: [String: JSONValue]

    /// Takes `arguments` (an object, or null for none); a key not in `allowed` is an error.
    public init(tool: String, _ arguments: JSONValue, allowed: [String]) throws {
        self.tool = tool
        switch arguments {
        case .null: values = [:]
        case .object(let o): values = o
        default: throw ToolError(tool: tool, "expected an arguments object, got \(arguments.kindName)")
        }
        for key in values.keys.sorted() where !allowed.contains(key) {
            throw ToolError(
                tool: tool,
                "unknown argument '\(key)'"
                    + (allowed.isEmpty
                        ? "; this tool takes no arguments" : "; arguments: \(allowed.joined(separator: ", "))"))
        }
    }

    /// A required string argument.
    public func string(_ key: String) throws -> String {
        guard let s = try optionalString(key) else { throw ToolError(tool: tool, "missing argument '\(key)'") }
        return s
    }

    /// A string argument that may be absent (or null).
    public func optionalString(_ key: String) throws -> String? {
        guard let v = values[key], v != .null else { return nil }
        guard let s = v.stringValue else {
            throw ToolError(tool: tool, "argument '\(key)' must be a string, got \(v.kindName)")
        }
        return s
    }
}
