import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad serve` as a child process on an ephemeral port with SmolLM2 (pure-Swift engine, so JSON schemas apply):
/// every endpoint, then requests meant to break it.
@Suite(
    "sanad serve end to end", .serialized,
    .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct ServeEndToEndTests {
    static let engine = ["--backend", "pure-swift", "-m", TestPaths.smolLM2, "-c", "512", "--tier", "4gb"]

    /// A chat request with a system message: without one SmolLM2's own template adds its default system turn
    /// ("You are a helpful AI assistant named SmolLM, …"), after which the 135M model answers this question with
    /// French words instead of Paris (llama-server --jinja gives it the same prompt tokens).
    func chat(_ content: String, _ extra: String = "") -> String {
        #"{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},"#
            + #"{"role":"user","content":\#(JSONValue.string(content).jsonString)}],"temperature":0"# + extra + "}"
    }

    @Test("health, models, chat (plain, streamed, JSON schema), completions, embeddings, metrics; SIGTERM exits 0")
    func endpoints() throws {
        let server = try ServerProcess(Self.engine + ["--slots", "1"])
        let port = server.port
        #expect(server.startup.contains("POST http://127.0.0.1:\(port)/v1/chat/completions"), "\(server.startup)")

        let health = try request(port, "GET", "/health")
        #expect(health.status == 200 && health.json?["status"]?.stringValue == "ok")
        let models = try request(port, "GET", "/v1/models")
        let ids = models.json?["data"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids.contains("SmolLM2-135M-Instruct.Q4_1") && ids.contains("all-MiniLM-L6-v2"), "\(models.body)")

        let plain = try request(
            port, "POST", "/v1/chat/completions", body: chat("What is the capital of France?", #","max_tokens":24"#))
        #expect(plain.status == 200, "\(plain.body)")
        let answer = plain.json?["choices"]?.arrayValue?.first?["message"]?["content"]?.stringValue ?? ""
        #expect(answer.contains("Paris"), "\(plain.body)")
        #expect(plain.json?["usage"]?["completion_tokens"]?.intValue ?? 0 > 0)

        let streamed = try request(
            port, "POST", "/v1/chat/completions",
            body: chat(
                "What is the capital of France?",
                #","max_tokens":24,"stream":true,"stream_options":{"include_usage":true}"#))
        #expect(streamed.status == 200 && streamed.headers["content-type"] == "text/event-stream")
        let payloads = events(streamed.body)
        #expect(payloads.last == "[DONE]", "\(streamed.body)")
        let chunks = payloads.dropLast().compactMap { try? JSONValue.parse($0) }
        let text = chunks.compactMap { $0["choices"]?.arrayValue?.first?["delta"]?["content"]?.stringValue }.joined()
        #expect(text == answer, "streamed \(text.debugDescription) vs \(answer.debugDescription)")
        #expect(
            chunks.last?["usage"]?["completion_tokens"]?.intValue
                == plain.json?["usage"]?["completion_tokens"]?.intValue)

        let schema =
            #"{"type":"object","properties":{"city":{"type":"string"},"population":{"type":"integer"}},"required":["city","population"]}"#
        let structured = try request(
            port, "POST", "/v1/chat/completions",
            body: chat(
                "Give the capital of France and its population as JSON.",
                #","max_tokens":64,"response_format":{"type":"json_schema","json_schema":{"name":"c","schema":\#(schema)}}"#
            ))
        let document = structured.json?["choices"]?.arrayValue?.first?["message"]?["content"]?.stringValue ?? ""
        let value = try JSONValue.parse(document)
        #expect(value["city"]?.stringValue != nil && value["population"]?.intValue != nil, "\(structured.body)")

        let completion = try request(
            port, "POST", "/v1/completions",
            body: #"{"prompt":"The capital of France is","max_tokens":5,"temperature":0}"#)
        let continuation = completion.json?["choices"]?.arrayValue?.first?["text"]?.stringValue ?? ""
        #expect(completion.status == 200 && !continuation.isEmpty, "\(completion.body)")

        let embeddings = try request(port, "POST", "/v1/embeddings", body: #"{"input":["passport renewal","a cat"]}"#)
        let vectors = embeddings.json?["data"]?.arrayValue?.compactMap { $0["embedding"]?.arrayValue } ?? []
        #expect(vectors.count == 2 && vectors.allSatisfy { $0.count == 384 }, "\(embeddings.body.prefix(300))")
        let norm = vectors.first.map { v in v.compactMap(\.doubleValue).map { $0 * $0 }.reduce(0, +) } ?? 0
        #expect(abs(norm - 1) < 1e-3)

        let metrics = try request(port, "GET", "/metrics")
        #expect(metrics.body.contains(#"sanad_requests_total{endpoint="/v1/chat/completions",status="200"} 3"#))
        #expect(metrics.body.contains("sanad_time_to_first_token_seconds_count 4"), "\(metrics.body)")
        #expect(metrics.body.contains("sanad_slots_total 1") && metrics.body.contains("sanad_queue_depth 0"))

        let missing = try request(port, "GET", "/v1/nothing")
        #expect(missing.status == 404 && missing.json?["error"]?["type"]?.stringValue == "invalid_request_error")

        // HTTP/1.0: the stream is not chunked and ends when the server closes the connection.
        let old = try RawConnection(port: port)
        let short = chat("Say hello.", #","max_tokens":4,"stream":true"#)
        old.send(
            "POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: \(short.utf8.count)\r\n\r\n"
                + short)
        let oldReply = try parseReply(old.receiveAll())
        #expect(oldReply.headers["transfer-encoding"] == nil && events(oldReply.body).last == "[DONE]")

        // SIGTERM while a reply streams: the reply finishes, then the server exits 0.
        let inFlight = try RawConnection(port: port)
        let long = chat("Tell a story.", #","max_tokens":48,"stream":true"#)
        inFlight.send(
            "POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: \(long.utf8.count)\r\n\r\n"
                + long)
        var first = inFlight.receive()
        while !String(decoding: first, as: UTF8.self).contains("data: ") {
            let part = inFlight.receive()
            if part.isEmpty { break }
            first += part
        }
        server.process.terminate()
        let rest = first + inFlight.receiveAll()
        #expect(events(try parseReply(rest).body).last == "[DONE]", "\(String(decoding: rest, as: UTF8.self))")
        #expect(server.stop(signal: false) == 0, "\(server.stderr)")
    }

    @Test(
        "an honest API: unknown fields refused, seeds reproduce, logprobs, n and array prompts, embedding usage, HTTP extras, llama-server's routes"
    )
    func honestAPI() throws {
        let server = try ServerProcess(Self.engine + ["--slots", "1", "--allowed-origins", "http://app.example"])
        let port = server.port
        func post(_ path: String, _ body: String) throws -> RawReply { try request(port, "POST", path, body: body) }
        func choices(_ r: RawReply) -> [JSONValue] { r.json?["choices"]?.arrayValue ?? [] }

        // Nothing silently dropped: each endpoint names the field it does not implement.
        for (path, body, param) in [
            ("/v1/chat/completions", chat("Hi", #","logit_bias":{"1":5}"#), "logit_bias"),
            ("/v1/completions", #"{"prompt":"Hi","echo":true}"#, "echo"),
            ("/v1/embeddings", #"{"input":"Hi","dimensions":8}"#, "dimensions"),
            ("/tokenize", #"{"content":"Hi","add_bos":true}"#, "add_bos"),
        ] {
            let r = try post(path, body)
            #expect(r.status == 400 && r.json?["error"]?["param"]?.stringValue == param, "\(path): \(r.body)")
        }

        // A seed makes sampling reproducible (top_k, min_p, penalties applied); another seed gives other text.
        func sampled(_ seed: Int) throws -> String {
            let r = try post(
                "/v1/completions",
                #"{"prompt":"Once upon a time","max_tokens":16,"temperature":1,"top_k":50,"min_p":0.01,"repeat_penalty":1.1,"presence_penalty":0.3,"frequency_penalty":0.2,"seed":\#(seed)}"#
            )
            #expect(r.status == 200, "\(r.body)")
            return choices(r).first?["text"]?.stringValue ?? ""
        }
        let first = try sampled(11)
        let again = try sampled(11)
        let others = try [12, 13, 14].map(sampled)
        #expect(!first.isEmpty && again == first)
        #expect(others.contains { $0 != first }, "three other seeds gave '\(first)'")

        // Chat logprobs: the tokens spell the answer; greedy, each is its own step's most likely token.
        let question = "What is the capital of France?"
        let withLogprobs = try post(
            "/v1/chat/completions", chat(question, #","max_tokens":12,"logprobs":true,"top_logprobs":3"#))
        let choice = try #require(choices(withLogprobs).first, "\(withLogprobs.body)")
        let content = choice["logprobs"]?["content"]?.arrayValue ?? []
        let answer = choice["message"]?["content"]?.stringValue ?? ""
        #expect(!content.isEmpty && content.compactMap { $0["token"]?.stringValue }.joined() == answer)
        for entry in content {
            let top = entry["top_logprobs"]?.arrayValue ?? []
            let logprob = entry["logprob"]?.doubleValue ?? 1
            #expect(top.count == 3 && logprob <= 0 && top.first?["logprob"]?.doubleValue == logprob, "\(entry)")
            #expect(top.first?["token"] == entry["token"] && entry["bytes"]?.arrayValue?.isEmpty == false)
        }
        let streamed = try post(
            "/v1/chat/completions",
            chat(question, #","max_tokens":12,"logprobs":true,"top_logprobs":3,"stream":true"#))
        let chunks = events(streamed.body).dropLast().compactMap { try? JSONValue.parse($0) }
        let streamedTokens = chunks.flatMap {
            $0["choices"]?.arrayValue?.first?["logprobs"]?["content"]?.arrayValue ?? []
        }
        #expect(streamedTokens == content, "\(streamed.body)")

        // Completions: the legacy shape; two prompts and n = 2 give four choices, index = prompt × n + k.
        let prompts = try post(
            "/v1/completions",
            #"{"prompt":["The capital of France is","One, two,"],"n":2,"max_tokens":6,"temperature":0,"logprobs":2}"#)
        let four = choices(prompts)
        #expect(four.compactMap { $0["index"]?.intValue } == [0, 1, 2, 3], "\(prompts.body)")
        let texts = four.map { $0["text"]?.stringValue ?? "" }
        #expect(texts[0] == texts[1] && texts[2] == texts[3] && texts[0] != texts[2], "greedy: \(texts)")
        let legacy = four[2]["logprobs"]
        #expect(legacy?["tokens"]?.arrayValue?.compactMap(\.stringValue).joined() == texts[2])
        #expect(legacy?["token_logprobs"]?.arrayValue?.count == legacy?["tokens"]?.arrayValue?.count)
        #expect(legacy?["top_logprobs"]?.arrayValue?.first?.objectValue?.count == 2, "\(prompts.body)")
        #expect(legacy?["text_offset"]?.arrayValue?.first?.intValue == 0)
        let alone = try post("/v1/completions", #"{"prompt":"One, two,","max_tokens":6,"temperature":0}"#)
        #expect(choices(alone).first?["text"]?.stringValue == texts[2])

        // n = 2 sampled with a seed: streamed choices equal the ones in one body.
        // (chat() asks for temperature 0; these ask for 1 instead.)
        func sampledChat(_ extra: String) -> String {
            chat("Tell me a joke.", #","n":2,"max_tokens":10,"seed":5"# + extra).replacingOccurrences(
                of: #","temperature":0"#, with: #","temperature":1"#)
        }
        let two = try post("/v1/chat/completions", sampledChat(""))
        let twoTexts = choices(two).map { $0["message"]?["content"]?.stringValue ?? "" }
        #expect(twoTexts.count == 2 && choices(two).compactMap { $0["index"]?.intValue } == [0, 1], "\(two.body)")
        let twoStream = try post("/v1/chat/completions", sampledChat(#","stream":true"#))
        var streamedTexts = ["", ""]
        var finished = 0
        for event in events(twoStream.body).dropLast().compactMap({ try? JSONValue.parse($0) }) {
            for c in event["choices"]?.arrayValue ?? [] {
                let i = c["index"]?.intValue ?? 0
                streamedTexts[i] += c["delta"]?["content"]?.stringValue ?? ""
                if c["finish_reason"]?.stringValue != nil { finished += 1 }
            }
        }
        #expect(streamedTexts == twoTexts && finished == 2, "\(twoStream.body)")

        // Embeddings count their tokens.
        let embedded = try post("/v1/embeddings", #"{"input":["a cat","renew my passport please"]}"#)
        let used = embedded.json?["usage"]?["prompt_tokens"]?.intValue ?? 0
        #expect(used >= 6 && embedded.json?["usage"]?["total_tokens"]?.intValue == used, "\(embedded.body.suffix(80))")

        // HTTP: a Date on every answer, HEAD on GET routes, CORS for --allowed-origins only.
        let models = try request(port, "GET", "/v1/models")
        let head = try request(port, "HEAD", "/v1/models")
        #expect(
            head.status == 200 && head.body.isEmpty && head.headers["content-length"] == "\(models.body.utf8.count)")
        #expect(models.headers["date"]?.hasSuffix(" GMT") == true && head.headers["date"] != nil)
        #expect(try request(port, "GET", "/nothing").headers["date"] != nil)
        let preflight = try request(
            port, "OPTIONS", "/v1/chat/completions",
            headers: [
                "Origin: http://app.example", "Access-Control-Request-Method: POST",
                "Access-Control-Request-Headers: content-type, authorization",
            ])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "http://app.example")
        #expect(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
        #expect(preflight.headers["access-control-allow-headers"]?.contains("authorization") == true)
        let foreign = try request(port, "OPTIONS", "/v1/chat/completions", headers: ["Origin: http://evil.example"])
        #expect(foreign.status == 403 && foreign.headers["access-control-allow-origin"] == nil)
        let cross = try request(
            port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":1}"#,
            headers: ["Origin: http://app.example"])
        #expect(cross.status == 200 && cross.headers["access-control-allow-origin"] == "http://app.example")
        #expect(try request(port, "GET", "/v1/models").headers["access-control-allow-origin"] == nil)

        // llama-server's routes.
        let tokens = try post("/tokenize", #"{"content":"Hello world","with_pieces":true}"#)
        let pieces = tokens.json?["tokens"]?.arrayValue ?? []
        #expect(pieces.compactMap { $0["piece"]?.stringValue }.joined() == "Hello world", "\(tokens.body)")
        let ids = pieces.compactMap { $0["id"] }
        let back = try post("/detokenize", JSONValue.object(["tokens": .array(ids)]).jsonString)
        #expect(back.json?["content"]?.stringValue == "Hello world", "\(back.body)")
        #expect(try post("/detokenize", #"{"tokens":[-1]}"#).json?["error"]?["param"]?.stringValue == "tokens")
        let props = try request(port, "GET", "/props")
        #expect(props.json?["n_ctx"]?.intValue == 512 && props.json?["total_slots"]?.intValue == 1, "\(props.body)")
        #expect(props.json?["chat_template"]?.stringValue?.contains("<|im_start|>") == true)
        #expect(props.json?["model_alias"]?.stringValue == "SmolLM2-135M-Instruct.Q4_1")
        let slots = try request(port, "GET", "/slots").json?.arrayValue ?? []
        #expect(slots.count == 1 && slots.first?["is_processing"]?.boolValue == false, "\(slots)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("tools: a required call names an offered function with arguments valid for its schema, plain and streamed")
    func tools() throws {
        let server = try ServerProcess(Self.engine + ["--slots", "1", "--no-embeddings"])
        let port = server.port
        let tools =
            #"[{"type":"function","function":{"name":"get_weather","description":"Current weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"]}}},{"type":"function","function":{"name":"get_time","description":"Current time in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#
        let extra = #","max_tokens":96,"tools":\#(tools),"tool_choice":"required""#
        let plain = try request(
            port, "POST", "/v1/chat/completions", body: chat("What is the weather in Paris, in celsius?", extra))
        #expect(plain.status == 200, "\(plain.body)")
        let choice = plain.json?["choices"]?.arrayValue?.first
        #expect(choice?["finish_reason"]?.stringValue == "tool_calls", "\(plain.body)")
        #expect(choice?["message"]?["content"] == .null)
        let call = try #require(choice?["message"]?["tool_calls"]?.arrayValue?.first, "\(plain.body)")
        #expect(call["type"]?.stringValue == "function" && call["id"]?.stringValue?.hasPrefix("call_") == true)
        let name = call["function"]?["name"]?.stringValue ?? ""
        let arguments = try JSONValue.parse(call["function"]?["arguments"]?.stringValue ?? "")
        #expect(["get_weather", "get_time"].contains(name), "\(plain.body)")
        #expect(arguments["city"]?.stringValue != nil, "\(plain.body)")
        if name == "get_weather" { #expect(["celsius", "fahrenheit"].contains(arguments["unit"]?.stringValue ?? "")) }

        let streamed = try request(
            port, "POST", "/v1/chat/completions",
            body: chat("What is the weather in Paris, in celsius?", extra + #","stream":true"#))
        let chunks = events(streamed.body).dropLast().compactMap { try? JSONValue.parse($0) }
        let deltas = chunks.compactMap { $0["choices"]?.arrayValue?.first }
        let streamedCall = deltas.compactMap { $0["delta"]?["tool_calls"]?.arrayValue?.first }.first
        #expect(streamedCall?["function"]?["name"]?.stringValue == name, "\(streamed.body)")
        #expect(streamedCall?["function"]?["arguments"] == call["function"]?["arguments"], "greedy: the same call")
        #expect(deltas.last?["finish_reason"]?.stringValue == "tool_calls", "\(streamed.body)")
        #expect(!deltas.contains { ($0["delta"]?["content"]?.stringValue ?? "").contains("{") }, "no raw envelope")
    }

    @Test("malformed, oversized and slow requests, a full queue and a disconnect mid-stream leave it serving")
    func abuse() throws {
        let server = try ServerProcess(
            Self.engine + [
                "--slots", "1", "--queue", "0", "--read-timeout", "1", "--max-body", "65536",
                "--no-embeddings",
            ])
        let port = server.port
        func healthy() throws -> Bool { try request(port, "GET", "/health").status == 200 }

        let garbage = try RawConnection(port: port)
        garbage.send("GARBAGE\r\n\r\n")
        #expect(try parseReply(garbage.receiveAll()).status == 400)
        let binary = try RawConnection(port: port)
        binary.send((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) } + [13, 10, 13, 10])
        #expect(try parseReply(binary.receiveAll()).status == 400)

        let big = try RawConnection(port: port)
        big.send("POST /v1/completions HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n{")
        #expect(try parseReply(big.receiveAll()).status == 413)
        let headers = try RawConnection(port: port)
        headers.send("GET /health HTTP/1.1\r\n" + String(repeating: "X-Filler: aaaaaaaaaaaaaaaa\r\n", count: 2000))
        #expect(try parseReply(headers.receiveAll()).status == 431)

        // A client that never finishes its headers is answered 408 and dropped after --read-timeout.
        let slow = try RawConnection(port: port)
        slow.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(try parseReply(slow.receiveAll()).status == 408)
        #expect(try healthy())

        // Expect: 100-continue is answered before the body is sent.
        let expecting = try RawConnection(port: port)
        let prompt = #"{"prompt":"Hi","max_tokens":1}"#
        expecting.send(
            "POST /v1/completions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(prompt.utf8.count)\r\n\r\n")
        #expect(String(decoding: expecting.receive(), as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        expecting.send(prompt)
        #expect(try parseReply(expecting.receive()).status == 200)

        // Keep-alive: two requests on one connection.
        let kept = try RawConnection(port: port)
        kept.send(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        let both = String(decoding: kept.receiveAll(), as: UTF8.self)
        #expect(both.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(both)")

        // One slot, no queue: while a long stream runs, the next request is 503 with Retry-After; when its client
        // disconnects mid-stream, the slot is freed and the next request is served.
        let long = try RawConnection(port: port)
        let body = chat("Write a very long story about a lighthouse.", #","max_tokens":400,"stream":true"#)
        long.send(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body)
        var seen = ""
        while !seen.contains("\"content\":\"") || seen.components(separatedBy: "data: ").count < 4 {
            let part = long.receive()
            if part.isEmpty { break }
            seen += String(decoding: part, as: UTF8.self)
        }
        let busy = try request(port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":2}"#)
        #expect(busy.status == 503 && busy.headers["retry-after"] == "1", "\(busy.body)")
        #expect(busy.json?["error"]?["code"]?.stringValue == "server_busy")
        long.close()
        var freed = false
        for _ in 0..<300 where !freed {
            let h = try request(port, "GET", "/health")
            freed = h.json?["slots_busy"]?.intValue == 0
            if !freed { usleep(100_000) }
        }
        #expect(freed, "the slot stayed busy after the client left")
        let after = try request(port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":2}"#)
        #expect(after.status == 200, "\(after.body)")
        let metrics = try request(port, "GET", "/metrics").body
        #expect(
            metrics.contains(#"sanad_requests_total{endpoint="/v1/chat/completions",status="499"} 1"#), "\(metrics)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test(
        "web chat: the RTL page, greeting and chips, a tapped chip streams a grounded reply with its deep link, the link opens its page"
    )
    func webChat() throws {
        let server = try ServerProcess(Self.engine + ["--no-embeddings", "--now", "2026-11-22"])
        let port = server.port
        let page = try request(port, "GET", "/")
        #expect(page.status == 200 && page.body.contains(#"<html lang="ar" dir="rtl">"#))
        let opened = try request(port, "POST", "/chat/open", body: "{}")
        let conversation = try #require(opened.json?["conversation"]?.stringValue, "\(opened.body)")
        // The conversation belongs to this browser: its cookie goes with every later request.
        let cookie = try #require(opened.headers["set-cookie"]?.split(separator: ";").first, "\(opened.headers)")
        let browser = ["Cookie: \(cookie)"]
        let greeting = opened.json?["messages"]?.arrayValue?.first?["content"]?.stringValue ?? ""
        #expect(greeting.contains("سند"), "\(opened.body)")
        let chips = opened.json?["chips"]?.arrayValue ?? []
        let chip = try #require(
            chips.first { ($0["text"]?.stringValue ?? "").contains("رخصة قيادتك على وشك الانتهاء") }, "\(opened.body)")

        let turn = try request(
            port, "POST", "/chat/send",
            body: JSONValue.object(["conversation": .string(conversation), "chip": chip["id"] ?? .null]).jsonString,
            headers: browser)
        #expect(turn.status == 200 && turn.headers["content-type"] == "text/event-stream")
        let turnEvents = events(turn.body).dropLast().compactMap { try? JSONValue.parse($0) }
        let types = turnEvents.compactMap { $0["type"]?.stringValue }
        #expect(types.first == "message" && types.contains("start") && types.contains("piece"), "\(types)")
        // A chip's reply is grounded: only the verified reply streams, and the check comes with the message.
        #expect(!types.contains("draft"), "\(types)")
        let reply = try #require(turnEvents.first { $0["type"]?.stringValue == "reply" }?["message"])
        #expect(reply["check"]?["verified"]?.boolValue != nil && reply["check"]?["note"]?.stringValue != nil)
        let url = try #require(reply["link"]?["url"]?.stringValue, "\(reply)")
        #expect(url.hasPrefix("absher://service/driving_license_renewal"))

        let destination = try request(
            port, "POST", "/chat/follow",
            body: JSONValue.object(["conversation": .string(conversation), "url": .string(url)]).jsonString,
            headers: browser)
        #expect(destination.status == 200 && destination.json?["screen"]?.stringValue != nil, "\(destination.body)")
        let back = try request(
            port, "POST", "/chat/back", body: JSONValue.object(["conversation": .string(conversation)]).jsonString,
            headers: browser)
        #expect(back.status == 200)
        // A page may ask for the chat's language: the greeting and chips are then in it.
        let english = try request(port, "POST", "/chat/open", body: #"{"lang":"en"}"#, headers: browser)
        #expect(english.json?["language"]?.stringValue == "en", "\(english.body)")
        let hello = english.json?["messages"]?.arrayValue?.first?["content"]?.stringValue ?? ""
        #expect(hello.hasPrefix("Hello, I am Sanad"), "\(english.body)")
        #expect(
            english.json?["chips"]?.arrayValue?.first?["text"]?.stringValue?.hasPrefix("You have a proactive alert")
                == true, "\(english.body)")
        #expect(opened.json?["language"]?.stringValue == "ar")
        let french = try request(port, "POST", "/chat/open", body: #"{"lang":"fr"}"#, headers: browser)
        #expect(french.status == 400 && french.json?["error"]?["param"]?.stringValue == "lang", "\(french.body)")
        let unknown = try request(port, "POST", "/chat/send", body: #"{"conversation":"nope","text":"hi"}"#)
        #expect(unknown.status == 400 && unknown.json?["error"]?["param"]?.stringValue == "conversation")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("the forms place: its page, the templates offered, a start, a refused and a saved answer, back, a download")
    func formsPlace() throws {
        let data = try TestPaths.temporaryDirectory()
        let server = try ServerProcess(
            Self.engine + ["--no-embeddings", "--now", "2026-11-22"], environment: ["SANAD_DATA": data.path])
        let port = server.port
        func post(_ path: String, _ body: JSONValue, headers: [String] = []) throws -> RawReply {
            try request(port, "POST", path, body: body.jsonString, headers: headers)
        }
        let page = try request(port, "GET", "/forms?lang=en")
        #expect(page.status == 200 && page.body.contains("<html") && page.body.contains("/forms/api/list"))
        let list = try request(port, "GET", "/forms/api/list?lang=en")
        // The Absher product offers the DS-160 only (the sample user does not live in the US).
        #expect(list.json?["templates"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["ds-160"], "\(list.body)")
        let started = try post("/forms/api/start", .object(["templateId": .string("ds-160"), "lang": .string("en")]))
        let id = try #require(started.json?["sessionId"]?.stringValue, "\(started.body)")
        #expect(started.json?["progress"]?["answered"] == .number(0) && started.json?["dir"] == .string("ltr"))
        // Starting again opens the same unfinished session.
        let again = try post("/forms/api/start", .object(["templateId": .string("ds-160"), "lang": .string("en")]))
        #expect(again.json?["sessionId"]?.stringValue == id)
        let saved = try post("/forms/api/answer", .object(["id": .string(id), "answer": .string("ERIKSSON")]))
        #expect(saved.json?["outcomes"]?.arrayValue?.first?["saved"] == .bool(true), "\(saved.body)")
        _ = try post("/forms/api/answer", .object(["id": .string(id), "answer": .string("ANNA")]))
        let refused = try post("/forms/api/answer", .object(["id": .string(id), "answer": .string("maybe")]))
        let outcome = refused.json?["outcomes"]?.arrayValue?.first
        #expect(outcome?["saved"] == .bool(false) && outcome?["suggestion"]?.stringValue != nil, "\(refused.body)")
        let back = try post("/forms/api/back", .object(["id": .string(id)]))
        #expect(back.json?["question"]?["fieldId"] == .string("givenNames"), "\(back.body)")
        let file = try request(port, "GET", "/forms/api/export?id=\(id)&file=answers.json")
        #expect(file.status == 200 && file.headers["content-disposition"]?.contains("\(id)-answers.json") == true)
        #expect(file.json?["answers"]?["surname"] == .string("ERIKSSON"), "\(file.body)")
        // A change from another site's page is refused; an unknown call names itself.
        let foreign = try post(
            "/forms/api/answer", .object(["id": .string(id), "answer": .string("X")]),
            headers: ["Origin: http://evil.example"])
        #expect(foreign.status == 403, "\(foreign.body)")
        let unknown = try request(port, "GET", "/forms/api/nope")
        #expect(unknown.status == 400 && unknown.body.contains("/forms/api/nope"), "\(unknown.body)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    /// The raw event stream of a chip tap and a typed question in a new web chat conversation of `server`.
    func webChatTurns(_ server: ServerProcess) throws -> String {
        let opened = try request(server.port, "POST", "/chat/open", body: "{}")
        let conversation = try #require(opened.json?["conversation"]?.stringValue, "\(opened.body)")
        let cookie = try #require(opened.headers["set-cookie"]?.split(separator: ";").first, "\(opened.headers)")
        let chip = try #require(opened.json?["chips"]?.arrayValue?.first?["id"], "\(opened.body)")
        var body = ""
        for turn: JSONValue in [.object(["chip": chip]), .object(["text": .string("جوازي متى يخلص؟")])] {
            guard case .object(var fields) = turn else { continue }
            fields["conversation"] = .string(conversation)
            let r = try request(
                server.port, "POST", "/chat/send", body: JSONValue.object(fields).jsonString,
                headers: ["Cookie: \(cookie)"])
            #expect(r.status == 200, "\(r.body)")
            body += r.body
        }
        return body
    }

    @Test("web chat: no draft reaches the browser without --show-drafts; with it, a draft event and the check's draft")
    func webChatDrafts() throws {
        let debug = try ServerProcess(
            Self.engine + ["--no-embeddings", "--now", "2026-11-22", "--show-drafts", "--phrasing", "model"])
        let debugEvents = events(try webChatTurns(debug)).compactMap { try? JSONValue.parse($0) }
        #expect(debug.stop() == 0, "\(debug.stderr)")
        let drafts = debugEvents.filter { $0["type"]?.stringValue == "draft" }
        // SmolLM2's Arabic fails the check: each rejected draft also rides in the reply's check, with why.
        #expect(drafts.count == 2, "\(debugEvents)")
        let texts = drafts.compactMap { $0["text"]?.stringValue }.filter { !$0.isEmpty }
        #expect(!texts.isEmpty)
        let checked = debugEvents.compactMap { $0["message"]?["check"]?["draft"]?.stringValue }
        #expect(checked == texts, "\(debugEvents)")

        let server = try ServerProcess(Self.engine + ["--no-embeddings", "--now", "2026-11-22", "--phrasing", "model"])
        let body = try webChatTurns(server)
        #expect(server.stop() == 0, "\(server.stderr)")
        let shown = events(body).compactMap { try? JSONValue.parse($0) }
        #expect(!shown.contains { $0["type"]?.stringValue == "draft" }, "\(body)")
        #expect(!shown.contains { $0["message"]?["check"]?["draft"] != nil }, "\(body)")
        let carried = shown.map(\.jsonString).joined(separator: "\n")
        for text in texts {
            // Both as sent and as the page decodes it (the same JSON writer escapes the draft the same way).
            let escaped = String(JSONValue.string(text).jsonString.dropFirst().dropLast())
            #expect(!body.contains(text) && !carried.contains(escaped), "draft '\(text)' reached the browser: \(body)")
        }
        #expect(shown.contains { $0["type"]?.stringValue == "piece" }, "\(body)")
    }

    @Test("the openai engine against sanad serve: the same greedy text as in process, chat, a clear error when down")
    func remoteEngine() throws {
        let server = try ServerProcess(Self.engine + ["--no-embeddings", "--no-web-chat", "--api-key", "k3y"])
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try writeRemoteConfig(
            in: dir,
            options: [
                "url": .string("http://127.0.0.1:\(server.port)"), "model": .string("SmolLM2-135M-Instruct.Q4_1"),
                "apiKey": .string("k3y"),
            ])
        let prompt = "The capital of France is"
        let remote = try SanadCLI.run(["generate", "--config", file.path, "--temp", "0", "-n", "16", prompt])
        let local = try SanadCLI.run(["generate"] + Self.engine + ["--temp", "0", "-n", "16", prompt])
        #expect(remote.status == 0 && remote.stderr.contains("backend: openai"), "\(remote.stderr)")
        #expect(remote.stdout == local.stdout && !remote.stdout.isEmpty, "\(remote.stdout) vs \(local.stdout)")
        let chat = try SanadCLI.run(
            [
                "generate", "--config", file.path, "--chat", "--system", "You are a helpful assistant.", "--temp", "0",
                "-n", "24", "What is the capital of France?",
            ])
        #expect(chat.stdout.contains("Paris"), "\(chat.stdout) \(chat.stderr)")
        #expect(server.stop() == 0)
        let down = try SanadCLI.run(["generate", "--config", file.path, "--temp", "0", "-n", "4", prompt])
        #expect(down.status == 1 && down.stderr.contains("is the server running?"), "\(down.stderr)")
    }

    @Test("an API key is required when given (401 without, constant-time check), and for any host but loopback")
    func apiKey() throws {
        let open = try SanadCLI.run(["serve", "--host", "0.0.0.0", "--port", "0"] + Self.engine)
        #expect(open.status == 64 && open.stderr.contains("--api-key"), "\(open.stderr)")
        for bad in [["--read-timeout", "1e300"], ["--port", "65536"], ["--slots", "0"]] {
            let r = try SanadCLI.run(["serve"] + bad + Self.engine)
            #expect(r.status == 64 && r.stderr.contains("See 'sanad serve --help'"), "\(bad): \(r.stderr)")
        }
        let server = try ServerProcess(Self.engine + ["--api-key", "s3cret", "--no-embeddings"])
        #expect(try request(server.port, "GET", "/health").status == 200)
        let refused = try request(server.port, "GET", "/v1/models")
        #expect(refused.status == 401 && refused.json?["error"]?["code"]?.stringValue == "invalid_api_key")
        #expect(try request(server.port, "GET", "/v1/models", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(try request(server.port, "GET", "/v1/models", headers: ["Authorization: Bearer s3cret"]).status == 200)
        #expect(server.stop() == 0)
    }

    @Test("beyond loopback: the login page without the key, a wrong key refused, the cookie works, Origin checked")
    func webLogin() throws {
        let data = try TestPaths.temporaryDirectory()
        let server = try ServerProcess(
            Self.engine + ["--no-embeddings", "--now", "2026-11-22", "--host", "0.0.0.0", "--api-key", "s3cret"],
            environment: ["SANAD_DATA": data.path])
        let port = server.port
        let own = "Origin: http://127.0.0.1:\(port)"
        for page in ["/", "/forms?lang=en"] {
            let r = try request(port, "GET", page)
            #expect(r.status == 401 && r.body.contains("/login") && r.body.contains("type=\"password\""), "\(page)")
        }
        let call = try request(port, "GET", "/forms/api/list")
        #expect(call.status == 401 && call.json?["error"]?["code"]?.stringValue == "invalid_api_key", "\(call.body)")
        let wrong = try request(port, "POST", "/login", body: #"{"key":"s3creT"}"#, headers: [own])
        #expect(wrong.status == 401 && wrong.json?["error"]?["param"]?.stringValue == "key", "\(wrong.body)")
        #expect(wrong.headers["set-cookie"] == nil)
        let prefix = try request(port, "POST", "/login", body: #"{"key":"s3cre"}"#, headers: [own])
        #expect(prefix.status == 401)
        let foreignLogin = try request(
            port, "POST", "/login", body: #"{"key":"s3cret"}"#, headers: ["Origin: http://evil.example"])
        #expect(foreignLogin.status == 403 && foreignLogin.headers["set-cookie"] == nil, "\(foreignLogin.body)")
        let login = try request(port, "POST", "/login", body: #"{"key":"s3cret"}"#, headers: [own])
        let setCookie = try #require(login.headers["set-cookie"], "\(login.status) \(login.body)")
        #expect(login.status == 200 && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        #expect(!setCookie.contains("Secure") && !setCookie.contains("s3cret"), "\(setCookie)")
        let cookie = "Cookie: " + String(setCookie.split(separator: ";")[0])
        // Behind TLS (the browser's origin is https) the cookie is Secure.
        let tls = try request(
            port, "POST", "/login", body: #"{"key":"s3cret"}"#,
            headers: ["Origin: https://127.0.0.1:\(port)", "X-Forwarded-Proto: https"])
        #expect(tls.headers["set-cookie"]?.contains("; Secure") == true, "\(tls.headers)")
        let page = try request(port, "GET", "/forms?lang=en", headers: [cookie])
        #expect(page.status == 200 && page.body.contains("/forms/api/list"))
        #expect(try request(port, "GET", "/", headers: [cookie]).status == 200)
        let list = try request(port, "GET", "/forms/api/list", headers: [cookie])
        #expect(list.status == 200 && list.json?["templates"] != nil, "\(list.body)")
        #expect(try request(port, "GET", "/v1/models", headers: ["Cookie: sanad_key=00"]).status == 401)
        // A change by the cookie: from this server's page it goes; from another site's page, or saying no origin, 403.
        let start = #"{"templateId":"ds-160","lang":"en"}"#
        let foreign = try request(
            port, "POST", "/forms/api/start", body: start, headers: [cookie, "Origin: http://evil.example"])
        #expect(foreign.status == 403 && foreign.json?["error"]?["code"]?.stringValue == "origin_not_allowed")
        let bare = try request(port, "POST", "/forms/api/start", body: start, headers: [cookie])
        #expect(bare.status == 403 && bare.body.contains("Origin"), "\(bare.body)")
        let started = try request(port, "POST", "/forms/api/start", body: start, headers: [cookie, own])
        #expect(started.status == 200 && started.json?["sessionId"]?.stringValue != nil, "\(started.body)")
        // The bearer key still works without an Origin (curl, SDKs).
        let bearer = try request(
            port, "POST", "/forms/api/start", body: start, headers: ["Authorization: Bearer s3cret"])
        #expect(bearer.status == 200, "\(bearer.body)")
        let logout = try request(port, "POST", "/logout", body: "{}", headers: [cookie, own])
        #expect(logout.status == 200 && logout.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test(
        "the forms place's backup and restore: the CLI's archive checked and merged by the same rules, a bad one refused"
    )
    func formsBackupRestore() throws {
        let (server, data) = try placeServer()
        let port = server.port
        func post(_ path: String, _ body: JSONValue) throws -> RawReply {
            try request(port, "POST", path, body: body.jsonString)
        }
        #expect(try request(port, "GET", "/forms/api/backup").body.contains("no forms to back up"))
        let started = try post("/forms/api/start", .object(["templateId": .string("ds-160"), "lang": .string("en")]))
        let id = try #require(started.json?["sessionId"]?.stringValue, "\(started.body)")
        _ = try post("/forms/api/answer", .object(["id": .string(id), "answer": .string("ERIKSSON")]))
        let download = try request(port, "GET", "/forms/api/backup")
        #expect(download.status == 200 && download.headers["content-type"] == "application/zip")
        #expect(download.body.hasPrefix("PK") && download.headers["content-disposition"]?.contains(".zip") == true)
        // The CLI's backup of the same store (its key) is what the page uploads.
        let file = data.appendingPathComponent("all.zip")
        let made = try SanadCLI.run(["form", "backup", "--all", file.path], environment: ["SANAD_DATA": data.path])
        #expect(made.status == 0, "\(made.stderr)")
        let archive = try Data(contentsOf: file)
        func restore(_ bytes: Data, apply: Bool, replace: Bool = false) throws -> RawReply {
            try post(
                "/forms/api/restore",
                .object([
                    "archive": .string(bytes.base64EncodedString()), "name": .string("all.zip"),
                    "apply": .bool(apply), "replace": .bool(replace),
                ]))
        }
        let same = try restore(archive, apply: false).json?["sessions"]?.arrayValue?.first
        #expect(same?["writes"] == .bool(false) && same?["explanation"]?.stringValue?.hasPrefix("unchanged") == true)
        // The store moves on: its newer version is kept, unless replacing (the store copied aside first).
        _ = try post("/forms/api/answer", .object(["id": .string(id), "answer": .string("ANNA")]))
        let kept = try restore(archive, apply: true)
        #expect(
            kept.json?["sessions"]?.arrayValue?.first?["explanation"]?.stringValue?.hasPrefix("kept the store's")
                == true)
        #expect(kept.json?["aside"] == .null, "\(kept.body)")
        let replaced = try restore(archive, apply: true, replace: true)
        #expect(replaced.json?["sessions"]?.arrayValue?.first?["writes"] == .bool(true), "\(replaced.body)")
        #expect(replaced.json?["aside"]?.stringValue?.hasSuffix(".zip") == true, "\(replaced.body)")
        let session = try request(port, "GET", "/forms/api/session?id=\(id)")
        #expect(session.json?["progress"]?["answered"] == .number(1), "\(session.body)")
        var tampered = archive
        tampered[tampered.count / 2] ^= 0xFF
        let bad = try restore(tampered, apply: true)
        #expect(bad.status == 400 && bad.body.contains("all.zip"), "\(bad.body)")
        let old = try restore(Data(#"{"format":"sanad-form-backup"}"#.utf8), apply: false)
        #expect(old.status == 400 && old.body.contains("keyed digest"), "\(old.body)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("the documents place: a zone read with its checks and proposals, a text cleaned, a proposal saved to a form")
    func documentsPlace() throws {
        let (server, _) = try placeServer()
        let port = server.port
        func post(_ path: String, _ body: JSONValue) throws -> RawReply {
            try request(port, "POST", path, body: body.jsonString)
        }
        let page = try request(port, "GET", "/documents?lang=en")
        #expect(page.status == 200 && page.body.contains("/documents/api/read"))
        let zone = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10\n"
        func read(_ text: String, name: String) throws -> RawReply {
            try post(
                "/documents/api/read",
                .object(["name": .string(name), "data": .string(Data(text.utf8).base64EncodedString())]))
        }
        let passport = try read(zone, name: "passport.txt")
        #expect(passport.json?["mrz"]?["valid"] == .bool(true), "\(passport.body)")
        #expect(passport.json?["mrz"]?["checks"]?.arrayValue?.count == 5)
        let proposals = try #require(passport.json?["proposals"]?.arrayValue, "\(passport.body)")
        let surname = try #require(proposals.first { $0["fieldId"]?.stringValue == "surname" })
        #expect(surname["evidence"]?["documentId"]?.stringValue == "passport.txt")
        let text = try read("regis-\ntration  of   the car\n", name: "note.txt")
        #expect(
            text.json?["kind"] == .string("text") && text.json?["cleanedText"] == .string("registration of the car"))
        let binary = try post(
            "/documents/api/read",
            .object(["name": .string("x.bin"), "data": .string(Data([0xFF, 0xFE, 0x00]).base64EncodedString())]))
        #expect(binary.status == 400 && binary.body.contains("neither an image"), "\(binary.body)")
        // Filling: the form's fields, then a proposal saved with the document as its evidence.
        let started = try post("/forms/api/start", .object(["templateId": .string("ds-160"), "lang": .string("en")]))
        let id = try #require(started.json?["sessionId"]?.stringValue)
        let fields = try request(port, "GET", "/forms/api/fields?id=\(id)")
        #expect(fields.json?["fields"]?.arrayValue?.contains { $0["id"] == .string("passportNumber") } == true)
        var accepted: [String: JSONValue] = ["id": .string(id)]
        accepted["fieldId"] = surname["fieldId"]
        accepted["value"] = surname["value"]
        accepted["evidence"] = surname["evidence"]
        let saved = try post("/forms/api/propose", .object(accepted))
        #expect(saved.json?["outcomes"]?.arrayValue?.first?["saved"] == .bool(true), "\(saved.body)")
        let answers = try request(port, "GET", "/forms/api/export?id=\(id)&file=answers.json")
        #expect(answers.body.contains("passport.txt: MRZ TD3, name"), "\(answers.body)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("the credit place: consent asked, a background analysis with progress, its signed record verified, a cancel")
    func creditPlace() throws {
        let (server, data) = try placeServer(["--max-body", "33554432"])
        let port = server.port
        func post(_ path: String, _ body: JSONValue) throws -> RawReply {
            try request(port, "POST", path, body: body.jsonString)
        }
        let page = try request(port, "GET", "/credit?lang=en")
        #expect(page.status == 200 && page.body.contains("/credit/api/start"))
        let state = try request(port, "GET", "/credit/api/state")
        #expect(state.json?["consent"] == .null && state.json?["traitsNote"]?.stringValue?.contains("lexicon") == true)
        let messages = """
            2024-06-01T09:00 | Aunt Huda | Good morning dear, how was the exam?
            2024-06-01T09:10 | me | It went well, thank you auntie!
            2024-06-02T18:00 | Omar | Can you pay back the 200 for the tickets?
            2024-06-02T18:05 | me | I promise I will pay the money on Sunday
            2024-06-04T08:00 | me | Paid, transferred the money this morning
            2024-06-04T08:30 | Omar | Received, thanks!

            """
        let refused = try post("/credit/api/start", .object(["messages": .string(messages)]))
        #expect(refused.status == 400 && refused.body.contains("consent"), "\(refused.body)")
        let started = try post(
            "/credit/api/start", .object(["messages": .string(messages), "consent": .bool(true)]))
        let job = try #require(started.json?["job"]?.stringValue, "\(started.body)")
        func finished(_ id: String) throws -> JSONValue {
            for _ in 0..<600 {
                let j = try request(port, "GET", "/credit/api/job?id=\(id)").json ?? .null
                if j["state"]?.stringValue != "running" && j["state"]?.stringValue != "cancelling" { return j }
                Thread.sleep(forTimeInterval: 0.1)
            }
            throw ServerTestError("analysis \(id) did not finish in 60 s")
        }
        let done = try finished(job)
        #expect(done["state"] == .string("done") && done["estimate"] == .number(6), "\(done)")
        let result = try #require(done["result"]?.objectValue, "\(done)")
        #expect(result["record"]?["consent"]?["how"] == .string("web"))
        #expect(result["record"]?["input"]?["messages"] == .number(6))
        let text = try #require(result["recordText"]?.stringValue)
        let verified = try post("/credit/api/verify", .object(["record": .string(text)]))
        #expect(verified.json?["valid"] == .bool(true) && verified.json?["recordId"] == result["recordId"])
        let forged = text.replacingOccurrences(of: "\"trustworthiness\":", with: "\"trustworthiness\":1")
        #expect(try post("/credit/api/verify", .object(["record": .string(forged)])).json?["valid"] == .bool(false))
        let id = try #require(result["recordId"]?.stringValue)
        let file = try request(port, "GET", "/credit/api/record?id=\(id)")
        #expect(file.body == text && file.headers["content-disposition"]?.contains("\(id).json") == true)
        #expect(try request(port, "GET", "/credit/api/record?id=..%2Fkeys").status == 400)
        // The consent is kept: the next analysis needs no flag. A large one is cancelled part way.
        let line = "2024-01-01T00:00 | Sam | I will pay the loan tomorrow\n"
        let large = try post(
            "/credit/api/start", .object(["messages": .string(String(repeating: line, count: 200_000))]))
        let big = try #require(large.json?["job"]?.stringValue, "\(large.body)")
        #expect(try post("/credit/api/cancel", .object(["id": .string(big)])).status == 200)
        let cancelled = try finished(big)
        #expect(
            cancelled["state"] == .string("cancelled") && cancelled["error"]?.stringValue?.contains("cancelled") == true
        )
        let records = try FileManager.default.contentsOfDirectory(
            atPath: data.appendingPathComponent("credit-scoring/records").path)
        #expect(records.count == 1, "\(records)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    /// A server for the web app's places: a fresh SANAD_DATA (returned), the sample user's date, `extra` options.
    func placeServer(_ extra: [String] = []) throws -> (ServerProcess, URL) {
        let data = try TestPaths.temporaryDirectory()
        let server = try ServerProcess(
            Self.engine + ["--no-embeddings", "--now", "2026-11-22"] + extra, environment: ["SANAD_DATA": data.path])
        return (server, data)
    }

}
