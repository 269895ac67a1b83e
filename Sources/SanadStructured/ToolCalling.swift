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

    /// A tool as the model is offered it: a name, what it does, and its arguments' JSON Schema (a plugin's `Tool`,
    /// or a function a client declares in an OpenAI request).
    public struct Offer: Sendable, Equatable {
        public var name: String
        public var description: String
        public var arguments: JSONValue

        public init(name: String, description: String, arguments: JSONValue) {
            self.name = name
            self.description = description
            self.arguments = arguments
        }

        public init(_ tool: any Tool) {
            self.init(name: tool.name, description: tool.description, arguments: tool.argumentsSchema)
        }
    }

    /// The envelope's schema over `tools`.
    public static func envelopeSchema(_ tools: [any Tool]) -> JSONValue {
        envelopeSchema(offers: tools.map(Offer.init))
    }

    /// The envelope's schema over `offers`; with `allowText`, one more alternative `{"content": TEXT}` lets the
    /// model answer without a call (OpenAI's `tool_choice: "auto"`).
    public static func envelopeSchema(offers: [Offer], allowText: Bool = false) -> JSONValue {
        var alternatives = offers.map { offer -> JSONValue in
            let properties: [String: JSONValue] = [
                "tool": .object(["const": .string(offer.name)]), "arguments": offer.arguments,
            ]
            return .object([
                "type": .string("object"), "properties": .object(properties),
                "required": .array([.string("tool"), .string("arguments")]), "additionalProperties": .bool(false),
            ])
        }
        if allowText {
            alternatives.append(
                .object([
                    "type": .string("object"),
                    "properties": .object(["content": .object(["type": .string("string")])]),
                    "required": .array([.string("content")]), "additionalProperties": .bool(false),
                ]))
        }
        return .object(["anyOf": .array(alternatives)])
    }

    /// The system text that offers `tools`: names, descriptions, argument schemas and the envelope.
    public static func instructions(_ tools: [any Tool]) -> String {
        instructions(offers: tools.map(Offer.init))
    }

    /// The system text that offers `offers`; with `allowText` it says how to answer without a call.
    public static func instructions(offers: [Offer], allowText: Bool = false) -> String {
        let list = offers.map { "- \($0.name): \($0.description) Arguments: \($0.arguments.jsonString)" }
        let how =
            allowText
            ? "Reply with JSON only: {\"tool\": NAME, \"arguments\": {...}} to call one tool, or "
                + "{\"content\": TEXT} to answer without a tool."
            : "You can call one tool. Reply with JSON only: {\"tool\": NAME, \"arguments\": {...}}."
        return how + "\nTools:\n" + list.joined(separator: "\n")
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
