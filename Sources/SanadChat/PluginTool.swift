import SanadCore

/// One argument of a `PluginTool`: its name, its JSON Schema and whether it must be given.
public struct ToolArgument: Sendable {
    public var name: String
    public var schema: JSONValue
    public var required: Bool

    public init(_ name: String, schema: JSONValue = .object(["type": .string("string")]), required: Bool = false) {
        self.name = name
        self.schema = schema
        self.required = required
    }
}

/// A tool made of a name, a description, its arguments and a body: the boilerplate every plugin's tools share.
///
/// The arguments object is read strictly before the body runs (an unknown key or a non-object names the
/// argument); an error the body throws that is not already a `ToolError` is wrapped in one naming the tool.
public struct PluginTool: Tool {
    public let name: String
    public let description: String
    public let arguments: [ToolArgument]
    let body: @Sendable (ToolArguments) async throws -> JSONValue

    public init(
        name: String, description: String, arguments: [ToolArgument] = [],
        body: @escaping @Sendable (ToolArguments) async throws -> JSONValue
    ) {
        self.name = name
        self.description = description
        self.arguments = arguments
        self.body = body
    }

    /// `{"type": "object", "properties": …, "required": […], "additionalProperties": false}`.
    public var argumentsSchema: JSONValue {
        var schema: [String: JSONValue] = [
            "type": .string("object"),
            "properties": .object(Dictionary(uniqueKeysWithValues: arguments.map { ($0.name, $0.schema) })),
            "additionalProperties": .bool(false),
        ]
        let required = arguments.filter(\.required).map { JSONValue.string($0.name) }
        if !required.isEmpty { schema["required"] = .array(required) }
        return .object(schema)
    }

    public func call(_ arguments: JSONValue) async throws -> JSONValue {
        let args = try ToolArguments(tool: name, arguments, allowed: self.arguments.map(\.name))
        do {
            return try await body(args)
        } catch let error as ToolError {
            throw error
        } catch {
            throw ToolError(tool: name, "\(error)")
        }
    }
}
