import SanadCore
import SanadServer
import Testing

/// Request bodies → generation parameters, and the refusals with the field they name.
@Suite("OpenAI request decoding")
struct OpenAIRequestTests {
    func body(_ text: String) throws -> [String: JSONValue] {
        try decodeJSONObject(Array(text.utf8), maximumBytes: 1 << 20)
    }

    func refusal(_ text: String, chat: Bool = true) -> APIError? {
        do {
            let b = try body(text)
            _ =
                chat
                ? try decodeChatRequest(b, defaultMaxTokens: 64) : try decodeCompletionRequest(b, defaultMaxTokens: 64)
            return nil
        } catch let e as APIError {
            return e
        } catch {
            return nil
        }
    }

    @Test("chat: messages (text parts joined, developer as system), sampling, stop, seed, stream options")
    func chat() throws {
        let r = try decodeChatRequest(
            body(
                #"{"model":"m","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],"temperature":0,"top_p":0.5,"max_tokens":7,"stop":["\n"],"seed":42,"stream":true,"stream_options":{"include_usage":true}}"#
            ), defaultMaxTokens: 64)
        #expect(r.prompt == .chat([.system("be brief"), .user("Hi there")]))
        #expect(r.parameters.maxTokens == 7 && r.parameters.sampling.temperature == 0)
        #expect(r.parameters.sampling.topP == 0.5 && r.parameters.sampling.seed == 42)
        #expect(r.parameters.stopStrings == ["\n"] && r.stream && r.includeUsage)
        #expect(r.parameters.constraint == nil)
    }

    @Test("tools: auto allows a text answer, required and a named function force a call; the offer is a system turn")
    func tools() throws {
        let tools =
            #"[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function","function":{"name":"get_time"}}]"#
        let auto = try decodeChatRequest(
            body(#"{"messages":[{"role":"user","content":"Weather in Paris?"}],"stop":"x","tools":\#(tools)}"#),
            defaultMaxTokens: 64)
        #expect(auto.tools?.textAllowed == true && auto.tools?.offers.map(\.name) == ["get_weather", "get_time"])
        #expect(auto.parameters.constraint != nil && auto.parameters.stopStrings.isEmpty)
        guard case .chat(let messages) = auto.prompt else { throw APIError(500, "not a chat") }
        #expect(messages.first?.role == .system && messages.first?.content.contains("get_weather") == true)
        #expect(messages.first?.content.contains("{\"content\": TEXT}") == true)
        let required = try decodeChatRequest(
            body(#"{"messages":[{"role":"user","content":"x"}],"tools":\#(tools),"tool_choice":"required"}"#),
            defaultMaxTokens: 64)
        #expect(required.tools?.textAllowed == false && required.tools?.offers.count == 2)
        let named = try decodeChatRequest(
            body(
                #"{"messages":[{"role":"user","content":"x"}],"tools":\#(tools),"tool_choice":{"type":"function","function":{"name":"get_time"}}}"#
            ), defaultMaxTokens: 64)
        #expect(named.tools?.offers.map(\.name) == ["get_time"] && named.tools?.textAllowed == false)
        let none = try decodeChatRequest(
            body(#"{"messages":[{"role":"user","content":"x"}],"tools":\#(tools),"tool_choice":"none"}"#),
            defaultMaxTokens: 64)
        #expect(none.tools == nil && none.parameters.constraint == nil)
    }

    @Test("a conversation with a call and its result is given to the model in the envelope it was asked for")
    func toolHistory() throws {
        let r = try decodeChatRequest(
            body(
                #"{"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"18 C, sunny"}]}"#
            ), defaultMaxTokens: 64)
        #expect(
            r.prompt
                == .chat([
                    .user("Weather?"), .assistant(#"{"arguments":{"city":"Paris"},"tool":"get_weather"}"#),
                    .user("Tool result: 18 C, sunny"),
                ]))
    }

    @Test(
        "bad tools are a 400 naming the field",
        arguments: [
            (#""tools":[{"type":"retrieval"}]"#, "tools[0]"),
            (#""tools":[{"type":"function","function":{"name":"bad name"}}]"#, "tools[0].function.name"),
            (
                #""tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]"#,
                "tools[1].function.name"
            ),
            (
                #""tools":[{"type":"function","function":{"name":"a","parameters":"x"}}]"#,
                "tools[0].function.parameters"
            ),
            (
                #""tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":{"type":"function","function":{"name":"b"}}"#,
                "tool_choice"
            ),
            (#""tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"sometimes""#, "tool_choice"),
            (#""tool_choice":"required""#, "tool_choice"),
            (
                #""tools":[{"type":"function","function":{"name":"a"}}],"response_format":{"type":"json_object"}"#,
                "response_format"
            ),
            (
                #""messages":[{"role":"assistant","tool_calls":[{"function":{"name":"a","arguments":"{oops"}}]}]"#,
                "messages[0].tool_calls[0].function.arguments"
            ),
        ])
    func badTools(extra: String, param: String) throws {
        let text =
            extra.hasPrefix(#""messages""#) ? "{\(extra)}" : #"{"messages":[{"role":"user","content":"x"}],\#(extra)}"#
        let error = try #require(refusal(text), "\(extra)")
        #expect(error.status == 400 && error.param == param, "\(error)")
    }

    @Test("tool call arguments nested 500 deep inside their string are a 400 naming the depth, not a crash")
    func deepToolArguments() throws {
        let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let error = try #require(refusal(deepToolCallBody(arguments: deep)))
        #expect(error.status == 400 && error.param == "messages[0].tool_calls[0].function.arguments", "\(error)")
        #expect(error.message.contains("nested deeper than 64 levels"), "\(error.message)")
        // JSONValue.parse is the same bounded reader.
        #expect(throws: SanadError.self) { try JSONValue.parse(deep) }
    }

    @Test("response_format json_schema becomes a constraint (and drops stop strings); a bad schema is a 400")
    func responseFormat() throws {
        let r = try decodeChatRequest(
            body(
                #"{"messages":[{"role":"user","content":"x"}],"stop":"}","response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}}"#
            ), defaultMaxTokens: 64)
        #expect(r.parameters.constraint != nil && r.parameters.stopStrings.isEmpty)
        let bad = refusal(
            #"{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"nonsense"}}}}"#
        )
        #expect(bad?.status == 400 && bad?.param == "response_format")
    }

    @Test("refusals name the field: messages, role, temperature, max_tokens, n, stop, tools, prompt")
    func refusals() {
        let cases: [(String, String)] = [
            (#"{"messages":[]}"#, "messages"),
            (#"{"messages":[{"role":"wizard","content":"x"}]}"#, "messages[0].role"),
            (#"{"messages":[{"role":"user","content":"x"}],"temperature":3}"#, "temperature"),
            (#"{"messages":[{"role":"user","content":"x"}],"max_tokens":0}"#, "max_tokens"),
            (#"{"messages":[{"role":"user","content":"x"}],"max_tokens":1.5}"#, "max_tokens"),
            (#"{"messages":[{"role":"user","content":"x"}],"n":2}"#, "n"),
            (#"{"messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}"#, "stop"),
            (#"{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}"#, "tools[0]"),
            (#"{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}"#, "messages[0].content"),
            // Below the shortest document (`{"a":""}`, 8 bytes; the tool envelope is longer): the limit is named.
            (
                #"{"messages":[{"role":"user","content":"x"}],"max_tokens":7,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}}"#,
                "max_tokens"
            ),
            (
                #"{"messages":[{"role":"user","content":"x"}],"max_tokens":20,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required"}"#,
                "max_tokens"
            ),
        ]
        for (text, param) in cases {
            let e = refusal(text)
            #expect(e?.status == 400 && e?.param == param, "\(text): \(String(describing: e))")
        }
        #expect(
            refusal(
                #"{"messages":[{"role":"user","content":"x"}],"max_tokens":8,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}}"#
            ) == nil)
        #expect(refusal(#"{"prompt":5}"#, chat: false)?.param == "prompt")
        #expect(refusal(#"{"prompt":["a"]}"#, chat: false) == nil)
    }

    @Test("bodies that are not JSON objects are 400 invalid_json; the error body has OpenAI's four fields")
    func notJSON() throws {
        for text in ["", "{", "[1]", "\"x\"", "{\"a\":1,}"] {
            do {
                _ = try body(text)
                Issue.record("accepted \(text.debugDescription)")
            } catch let e as APIError {
                #expect(e.status == 400 && e.code == "invalid_json")
            }
        }
        let error = try JSONValue.parse(openAIErrorJSON("m", type: "t"))
        #expect(error["error"]?.objectValue?.keys.sorted() == ["code", "message", "param", "type"])
    }

    @Test("embeddings: a string or strings, float or base64; anything else names the field")
    func embeddings() throws {
        let one = try decodeEmbeddingRequest(body(#"{"input":"a"}"#), maximumInputs: 4)
        #expect(one.texts == ["a"] && !one.base64)
        let many = try decodeEmbeddingRequest(
            body(#"{"input":["a","b"],"encoding_format":"base64"}"#), maximumInputs: 4)
        #expect(many.texts == ["a", "b"] && many.base64)
        for (text, param) in [
            (#"{"input":[1,2]}"#, "input"), (#"{"input":["a","b","c","d","e"]}"#, "input"),
            (#"{"input":"a","encoding_format":"hex"}"#, "encoding_format"),
        ] {
            #expect(throws: APIError.self, "\(text) → \(param)") {
                _ = try decodeEmbeddingRequest(body(text), maximumInputs: 4)
            }
        }
    }
}

/// A chat body whose one assistant message calls `a` with `arguments` (JSON text, sent as a string).
func deepToolCallBody(arguments: String) -> String {
    let call: JSONValue = .object([
        "function": .object(["name": .string("a"), "arguments": .string(arguments)])
    ])
    return JSONValue.object([
        "messages": .array([.object(["role": .string("assistant"), "tool_calls": .array([call])])])
    ]).jsonString
}
