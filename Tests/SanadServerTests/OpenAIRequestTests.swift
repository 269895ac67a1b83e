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
            (#"{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}"#, "tools"),
            (#"{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}"#, "messages[0].content"),
        ]
        for (text, param) in cases {
            let e = refusal(text)
            #expect(e?.status == 400 && e?.param == param, "\(text): \(String(describing: e))")
        }
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
