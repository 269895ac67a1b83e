import SanadChat
import SanadCore

/// Tool calls in Sanad's JSON envelope, `{"tool": NAME, "arguments": {…}}`: the model's reply is constrained to an
/// anyOf over the offered tools (each alternative the tool's name as a const and that tool's argument schema), so a
/// call to a tool not offered, or with arguments outside its schema, cannot be generated.
public enum ToolCalling {
    /// One call and what the tool returned.
    public struct Outcome: Sendable {
        public var tool: String
        public var arguments: JSONValue
        public var result: JSONValue
        /// The conversation with the call (assistant) and its result (user turn, `Tool result: …`) appended, to
        /// generate the answer from.
        public var messages: [ChatMessage]
    }

    /// The envelope's schema over `tools`.
    public static func envelopeSchema(_ tools: [any Tool]) -> JSONValue {
        let alternatives = tools.map { tool -> JSONValue in
            let properties: [String: JSONValue] = [
                "tool": .object(["const": .string(tool.name)]), "arguments": tool.argumentsSchema,
            ]
            return .object([
                "type": .string("object"), "properties": .object(properties),
                "required": .array([.string("tool"), .string("arguments")]), "additionalProperties": .bool(false),
            ])
        }
        return .object(["anyOf": .array(alternatives)])
    }

    /// The system text that offers `tools`: names, descriptions, argument schemas and the envelope.
    public static func instructions(_ tools: [any Tool]) -> String {
        let list = tools.map { "- \($0.name): \($0.description) Arguments: \($0.argumentsSchema.jsonString)" }
        return "You can call one tool. Reply with JSON only: {\"tool\": NAME, \"arguments\": {...}}.\nTools:\n"
            + list.joined(separator: "\n")
    }

    /// Asks the model for one call among `tools` after `messages` (the instructions go first as a system turn),
    /// runs the tool and returns the call, its result and the conversation to continue from. Throws `SchemaError`
    /// for an argument schema outside the supported subset, and the tool's own error.
    public static func call(
        session: any InferenceSession, messages: [ChatMessage], tools: [any Tool],
        parameters: GenerationParameters = GenerationParameters(maxTokens: 256)
    ) async throws -> Outcome {
        guard !tools.isEmpty else { throw SanadError.engine("no tool is offered: nothing to call") }
        let conversation = [ChatMessage.system(instructions(tools))] + messages
        let envelope = try await StructuredGeneration.generate(
            session: session, messages: conversation, schema: envelopeSchema(tools), parameters: parameters)
        guard let name = envelope["tool"]?.stringValue, let tool = tools.first(where: { $0.name == name }),
            let arguments = envelope["arguments"]
        else {
            // The schema makes this unreachable; checked anyway, never run unchecked.
            throw SanadError.engine("the tool call \(envelope.jsonString) names no offered tool")
        }
        let result = try await tool.call(arguments)
        return Outcome(
            tool: name, arguments: arguments, result: result,
            messages: conversation + [.assistant(envelope.jsonString), .user("Tool result: \(result.jsonString)")])
    }
}
