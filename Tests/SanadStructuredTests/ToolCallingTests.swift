import SanadChat
import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

/// A tool that records nothing and answers from its arguments.
private struct EchoTool: Tool {
    let name: String
    let description: String
    let argumentsSchema: JSONValue
    func call(_ arguments: JSONValue) async throws -> JSONValue { ["tool": .string(name), "received": arguments] }
}

private let offered: [any Tool] = [
    EchoTool(
        name: "get_weather", description: "The weather in a city.",
        argumentsSchema: [
            "type": "object", "properties": ["city": ["type": "string", "minLength": 1, "maxLength": 20]],
            "required": ["city"],
        ]),
    EchoTool(
        name: "add", description: "Adds two integers.",
        argumentsSchema: [
            "type": "object", "properties": ["a": ["type": "integer"], "b": ["type": "integer"]],
            "required": ["a", "b"],
        ]),
]

@Suite(
    "Tool calls on SmolLM2", .serialized,
    .enabled(if: SmolLM2Model.url != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct ToolCallingTests {
    @Test("the call names an offered tool with arguments valid for its schema; the result is fed back")
    func calls() async throws {
        let session = try SmolLM2Model.session()
        for (prompt, seed) in [("What is the weather in Riyadh?", UInt64(0)), ("What is 2 plus 3?", 1), ("Hi", 2)] {
            let sampling = seed == 0 ? SamplingParameters.greedy : SamplingParameters(temperature: 0.9, seed: seed)
            let outcome = try await ToolCalling.call(
                session: session, messages: [.user(prompt)], tools: offered,
                parameters: GenerationParameters(maxTokens: 96, sampling: sampling))
            let tool = try #require(offered.first { $0.name == outcome.tool }, "\(outcome.tool) was not offered")
            #expect(
                validates(outcome.arguments, tool.argumentsSchema, root: tool.argumentsSchema), "\(outcome.arguments)")
            #expect(outcome.result["received"] == outcome.arguments)
            #expect(outcome.messages.last?.content == "Tool result: \(outcome.result.jsonString)")
        }
    }

    @Test("only offered tools can be generated: the envelope is an anyOf of their names as consts")
    func envelope() throws {
        let schema = ToolCalling.envelopeSchema(Array(offered.prefix(1)))
        let matcher = JSONMatcher(try CompiledSchema(schema: schema))
        #expect(
            matcher.advanced(by: Array(#"{"tool":"get_weather","arguments":{"city":"Jeddah"}}"#.utf8))?.isComplete
                == true)
        #expect(matcher.advanced(by: Array(#"{"tool":"add""#.utf8)) == nil)
    }
}
