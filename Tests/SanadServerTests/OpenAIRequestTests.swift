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
            (#"{"messages":[{"role":"user","content":"x"}],"n":0}"#, "n"),
            (#"{"messages":[{"role":"user","content":"x"}],"n":17}"#, "n"),
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

    @Test(
        "a field the server does not implement is a 400 naming it, on every endpoint; nulls and no-op values pass",
        arguments: [
            ("chat", #""logit_bias":{"50256":-100}"#, "logit_bias"),
            ("chat", #""functions":[]"#, "functions"),
            ("chat", #""audio":{"voice":"alloy"}"#, "audio"),
            ("chat", #""store":true"#, "store"),
            ("chat", #""echo":false"#, "echo"),
            ("chat", #""stream_options":{"include_obfuscation":true}"#, "stream_options.include_obfuscation"),
            ("chat", #""top_logprobs":2"#, "top_logprobs"),
            ("chat", #""logprobs":3"#, "logprobs"),
            ("chat", #""logprobs":true,"tools":[{"type":"function","function":{"name":"a"}}]"#, "logprobs"),
            ("chat", #""n":2,"tools":[{"type":"function","function":{"name":"a"}}]"#, "n"),
            ("chat", #""repeat_penalty":0"#, "repeat_penalty"),
            ("chat", #""presence_penalty":3"#, "presence_penalty"),
            ("chat", #""top_k":1.5"#, "top_k"),
            ("completion", #""echo":true"#, "echo"),
            ("completion", #""suffix":"end""#, "suffix"),
            ("completion", #""best_of":3"#, "best_of"),
            ("completion", #""logit_bias":{"1":2}"#, "logit_bias"),
            ("completion", #""logprobs":21"#, "logprobs"),
            ("completion", #""prompt":[1,2,3]"#, "prompt"),
            ("completion", #""prompt":["a","b","c","d","e"],"n":4"#, "prompt"),
            ("completion", #""messages":[]"#, "messages"),
            ("embedding", #""dimensions":8"#, "dimensions"),
            ("embedding", #""max_tokens":8"#, "max_tokens"),
        ])
    func unsupportedFields(endpoint: String, extra: String, param: String) throws {
        let base: String
        switch endpoint {
        case "chat": base = #""messages":[{"role":"user","content":"x"}]"#
        case "completion": base = #""prompt":"x""#
        default: base = #""input":"x""#
        }
        // A later key wins in a Swift dictionary literal but not in JSON: put the extra first and skip the base's key.
        let text = extra.hasPrefix(#""prompt""#) ? "{\(extra)}" : "{\(base),\(extra)}"
        let error: APIError?
        if endpoint == "embedding" {
            do {
                _ = try decodeEmbeddingRequest(body(text), maximumInputs: 4)
                error = nil
            } catch let e as APIError { error = e }
        } else {
            error = refusal(text, chat: endpoint == "chat")
        }
        #expect(error?.status == 400 && error?.param == param, "\(text): \(String(describing: error))")
        #expect(error?.type == "invalid_request_error")
    }

    @Test("accepted: user, nulls, and no-op values of the fields that are not implemented")
    func noOpFields() throws {
        #expect(
            refusal(
                #"{"messages":[{"role":"user","content":"x"}],"user":"u","logit_bias":null,"functions":null,"parallel_tool_calls":true,"stream_options":{"include_usage":false}}"#
            ) == nil)
        #expect(
            refusal(
                #"{"prompt":"x","user":"u","echo":false,"suffix":null,"best_of":2,"n":2,"logit_bias":{},"logprobs":null}"#,
                chat: false) == nil)
        #expect(refusal(#"{"prompt":"x","best_of":1}"#, chat: false) == nil)
        let e = try decodeEmbeddingRequest(
            body(#"{"input":"x","model":"m","user":"u","encoding_format":null}"#), maximumInputs: 4)
        #expect(e.texts == ["x"])
    }

    @Test("llama-server's sampling extras, n, logprobs and array prompts reach the request")
    func samplingExtras() throws {
        let r = try decodeChatRequest(
            body(
                #"{"messages":[{"role":"user","content":"x"}],"top_k":7,"min_p":0.2,"repeat_penalty":1.3,"repeat_last_n":16,"presence_penalty":0.5,"frequency_penalty":-0.25,"seed":9,"n":3,"logprobs":true,"top_logprobs":4}"#
            ), defaultMaxTokens: 64)
        let s = r.parameters.sampling
        #expect(s.topK == 7 && s.minP == 0.2 && s.repetitionPenalty == 1.3 && s.repetitionWindow == 16)
        #expect(s.presencePenalty == 0.5 && s.frequencyPenalty == -0.25 && s.seed == 9)
        #expect(r.choicesPerPrompt == 3 && r.logprobs == 4)
        let plain = try decodeChatRequest(
            body(#"{"messages":[{"role":"user","content":"x"}],"logprobs":true}"#), defaultMaxTokens: 64)
        #expect(plain.logprobs == 0 && plain.choicesPerPrompt == 1)
        let off = try decodeChatRequest(
            body(#"{"messages":[{"role":"user","content":"x"}],"logprobs":false}"#), defaultMaxTokens: 64)
        #expect(off.logprobs == nil)
        let c = try decodeCompletionRequest(
            body(#"{"prompt":["a","b"],"n":2,"logprobs":2,"top_k":0}"#), defaultMaxTokens: 64)
        #expect(c.prompts == [.text("a"), .text("b")] && c.choicesPerPrompt == 2 && c.logprobs == 2)
        #expect(c.parameters.sampling.topK == 0)
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
