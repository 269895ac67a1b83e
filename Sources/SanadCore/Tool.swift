/// An action a plugin offers to the host or to a model: JSON arguments in, JSON result out.
public protocol Tool: Sendable {
    /// Unique, snake_case (`list_alerts`).
    var name: String { get }
    /// One sentence for `sanad tools list` and for a model's tool prompt.
    var description: String { get }
    /// JSON Schema of the arguments object.
    var argumentsSchema: JSONValue { get }
    /// Runs the tool. Invalid arguments throw an error naming the argument.
    func call(_ arguments: JSONValue) async throws -> JSONValue
}

/// An error a tool throws for bad arguments or a failed action.
public struct ToolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var tool: String
    public var message: String

    public init(tool: String, _ message: String) {
        self.tool = tool
        self.message = message
    }

    public var description: String { "tool '\(tool)': \(message)" }
}
