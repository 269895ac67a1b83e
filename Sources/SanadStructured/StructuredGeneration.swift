import SanadCore

/// One call that gets a schema-valid JSON value from a model: the forms and credit plugins' entry point.
public enum StructuredGeneration {
    /// Generates one JSON document valid for `schema` after `prompt` (text given to the model as it is: apply the
    /// chat template first, or use `generate(session:messages:…)`), from an empty session (it is reset first).
    /// Stop strings are not used (the document's end is the schema's). The document always closes within
    /// `parameters.maxTokens` on engines that take the constraint as a stage (`SchemaConstraint`); a limit below
    /// the shortest document is refused before generating. Throws `SchemaError` for a schema outside the supported
    /// subset, the engine's error when it cannot apply a constraint or the limit is too small, and an error when the
    /// document is not complete when generation stops (the llama engine's grammar knows no limit).
    public static func generate(
        session: any InferenceSession, prompt: String, schema: JSONValue,
        parameters: GenerationParameters = GenerationParameters(maxTokens: 512)
    ) async throws -> JSONValue {
        try await generate(
            session: session, prompt: prompt, constraint: SchemaConstraint(schema: schema), parameters: parameters)
    }

    /// The same, with `messages` put through the model's chat template (an assistant turn opened).
    public static func generate(
        session: any InferenceSession, messages: [ChatMessage], schema: JSONValue,
        parameters: GenerationParameters = GenerationParameters(maxTokens: 512)
    ) async throws -> JSONValue {
        let prompt = try session.applyChatTemplate(messages, addAssistantPrompt: true)
        return try await generate(session: session, prompt: prompt, schema: schema, parameters: parameters)
    }

    /// With a compiled constraint (to compile a schema once for many calls).
    public static func generate(
        session: any InferenceSession, prompt: String, constraint: SchemaConstraint, parameters: GenerationParameters
    ) async throws -> JSONValue {
        var parameters = parameters
        parameters.constraint = constraint
        parameters.stopStrings = []
        session.reset()
        var text = ""
        var finish: StopReason?
        for try await event in session.generate(.text(prompt, parseSpecial: true), parameters: parameters) {
            switch event {
            case .token(_, let piece): text += piece
            case .finished(let reason, _): finish = reason
            }
        }
        // A document that closes on the last token the limit allows ends with `maxTokens`, whole.
        guard finish == .endOfGeneration || constraint.isComplete(text.utf8) else {
            throw SanadError.engine(
                "the JSON document was not complete when generation stopped (\(finish?.rawValue ?? "no end")) after "
                    + "\(text.utf8.count) bytes; raise the token limit (maxTokens \(parameters.maxTokens))")
        }
        return try StrictJSON().parse(Array(text.utf8))
    }
}
