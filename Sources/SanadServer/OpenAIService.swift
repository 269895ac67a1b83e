import Foundation
import SanadCore

/// The OpenAI-compatible API over a pool of loaded sessions and an optional embedding model: routes, checks the
/// key, answers every request (errors in OpenAI's shape) and counts what it did.
public final class OpenAIService: Sendable {
    public let modelID: String
    public let embeddingModelID: String?
    public let pool: SlotPool<any InferenceSession>
    public let metrics: ServerMetrics
    private let embedding: (any EmbeddingModel)?
    /// The embedding model's one slot and its queue, as bounded as the generation queue: a batch runs alone, the
    /// others wait (or are answered 503) without holding any lock a connection could block on.
    private let embeddingSlot: SlotPool<Int>
    private let apiKey: String?
    private let defaultMaxTokens: Int
    private let maximumBodyBytes: Int
    private let created = Int(Date().timeIntervalSince1970)
    private let webChat: WebChatService?
    private let browserPolicy: BrowserPolicy
    /// `--chat-template`: applied instead of each model's own template; nil = the model's.
    private let chatTemplate: ChatPromptTemplate?

    public init(
        modelID: String, pool: SlotPool<any InferenceSession>, embedding: (any EmbeddingModel)?,
        embeddingModelID: String?,
        apiKey: String?, metrics: ServerMetrics, defaultMaxTokens: Int, maximumBodyBytes: Int,
        webChat: WebChatService? = nil, browserPolicy: BrowserPolicy = BrowserPolicy(bindHost: "127.0.0.1"),
        chatTemplate: ChatPromptTemplate? = nil
    ) {
        self.chatTemplate = chatTemplate
        self.webChat = webChat
        self.browserPolicy = browserPolicy
        self.modelID = modelID
        self.pool = pool
        self.embedding = embedding
        self.embeddingSlot = SlotPool([0], queueCapacity: pool.queueCapacity)
        self.embeddingModelID = embeddingModelID
        self.apiKey = apiKey
        self.metrics = metrics
        self.defaultMaxTokens = defaultMaxTokens
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The paths served, for the startup lines.
    public static let routes: [(method: String, path: String)] = [
        ("GET", "/health"), ("GET", "/metrics"), ("GET", "/v1/models"), ("POST", "/v1/chat/completions"),
        ("POST", "/v1/completions"), ("POST", "/v1/embeddings"),
    ]

    /// Answers one request on the connection's thread.
    public func handle(_ request: HTTPRequest, _ channel: ResponseChannel) {
        let path = request.head.path
        let status = respond(request, channel)
        metrics.request(path: allRoutes.contains { $0.path == path } ? path : "other", status: status)
    }

    /// What a request's head alone decides (`HTTPServerOptions.admit`), before its body is read: a Host this
    /// server does not answer to, or a missing API key (so an unauthenticated client is closed at its head).
    public func admit(_ head: HTTPRequestHead) -> HTTPParseError? {
        guard let refused = browserPolicy.checkHost(head) ?? keyRefusal(head) else { return nil }
        return HTTPParseError(refused.status, refused.message, code: refused.code)
    }

    /// The 401 for a request without the API key (every path but `/health` and the web chat's page needs it).
    private func keyRefusal(_ head: HTTPRequestHead) -> APIError? {
        guard let apiKey, head.path != "/health", head.path != "/",
            !bearerMatches(head.header("authorization"), key: apiKey)
        else { return nil }
        return APIError(401, "a valid API key is required (Authorization: Bearer KEY)", code: "invalid_api_key")
    }

    /// The API's routes and, when it is on, the web chat's.
    public var allRoutes: [(method: String, path: String)] {
        Self.routes + (webChat == nil ? [] : WebChatService.routes)
    }

    /// Sends the answer; returns its status (499 when the client left first).
    private func respond(_ request: HTTPRequest, _ channel: ResponseChannel) -> Int {
        func send(_ r: HTTPResponse) -> Int {
            channel.send(r)
            return r.status
        }
        let path = request.head.path
        let method = request.head.method
        if let refused = browserPolicy.checkHost(request.head) { return send(refused.response) }
        guard let route = allRoutes.first(where: { $0.path == path }) else {
            return send(APIError(404, "no route \(method) \(path)", code: "not_found").response)
        }
        guard method == route.method else {
            return send(
                APIError(405, "\(path) takes \(route.method), not \(method)", code: "method_not_allowed").response)
        }
        if method == "POST", let refused = browserPolicy.checkStateChanging(request.head) {
            return send(refused.response)
        }
        if let refused = keyRefusal(request.head) { return send(refused.response) }
        do {
            if let webChat, WebChatService.routes.contains(where: { $0.path == path }) {
                return try webChat.respond(request, channel)
            }
            switch path {
            case "/health":
                let load = pool.load
                return send(
                    .json(
                        200,
                        JSONValue.object([
                            "status": .string("ok"), "slots": .number(Double(pool.total)),
                            "slots_busy": .number(Double(load.busy)), "queued": .number(Double(load.queued)),
                        ]).jsonString))
            case "/metrics":
                let load = pool.load
                return send(
                    .text(
                        200, metrics.render(slots: pool.total, busy: load.busy, queued: load.queued),
                        contentType: "text/plain; version=0.0.4"))
            case "/v1/models":
                return send(.json(200, modelList()))
            case "/v1/embeddings":
                return send(try embed(decodeJSONObject(request.body, maximumBytes: maximumBodyBytes), channel))
            case "/v1/chat/completions":
                let body = try decodeJSONObject(request.body, maximumBytes: maximumBodyBytes)
                return complete(try decodeChatRequest(body, defaultMaxTokens: defaultMaxTokens), channel)
            default:
                let body = try decodeJSONObject(request.body, maximumBytes: maximumBodyBytes)
                return complete(try decodeCompletionRequest(body, defaultMaxTokens: defaultMaxTokens), channel)
            }
        } catch {
            return send(error.response)
        }
    }

    private func modelList() -> String {
        var models = [modelID]
        if let embeddingModelID { models.append(embeddingModelID) }
        return JSONValue.object([
            "object": .string("list"),
            "data": .array(
                models.map {
                    .object([
                        "id": .string($0), "object": .string("model"), "created": .number(Double(created)),
                        "owned_by": .string("sanad"),
                    ])
                }),
        ]).jsonString
    }

    private func embed(_ body: [String: JSONValue], _ channel: ResponseChannel) throws(APIError) -> HTTPResponse {
        guard let embedding, let embeddingModelID else {
            throw APIError(
                404, "no embedding model is configured; add an `embedding` block to the tier config",
                code: "model_not_found")
        }
        let (texts, base64) = try decodeEmbeddingRequest(body, maximumInputs: 256)
        let slot: Int
        switch embeddingSlot.acquire(abandon: { channel.clientGone }) {
        case .slot(let s): slot = s
        case .abandoned: throw APIError(499, "the client left")
        case .queueFull: throw busy(embeddingSlot, "embedding")
        }
        defer { embeddingSlot.release(slot) }
        let result = channel.runCancellable { () -> Result<EmbeddingBatch, any Error> in
            do { return .success(try await embedding.embedReportingTruncation(texts)) } catch {
                return .failure(error)
            }
        }
        let vectors: [[Float]]
        switch result {
        case .success(let batch): vectors = batch.vectors
        case .failure(let error): throw APIError(500, "embedding failed: \(error)", type: "server_error")
        case nil: throw APIError(499, "the client left")
        }
        let data = vectors.enumerated().map { i, v in
            let encoded =
                base64
                ? "\"" + v.withUnsafeBytes { Data($0) }.base64EncodedString() + "\""
                : "[" + v.map { $0.isFinite ? "\($0)" : "0" }.joined(separator: ",") + "]"
            return "{\"object\":\"embedding\",\"index\":\(i),\"embedding\":\(encoded)}"
        }
        let model = JSONValue.string(embeddingModelID).jsonString
        return .json(
            200,
            "{\"object\":\"list\",\"data\":[\(data.joined(separator: ","))],\"model\":\(model),"
                + "\"usage\":{\"prompt_tokens\":0,\"total_tokens\":0}}")
    }

    /// A chat or text completion: waits for a slot (or answers 503 when the queue is full), generates, and answers
    /// in one body or as server-sent events.
    private func complete(_ request: CompletionRequest, _ channel: ResponseChannel) -> Int {
        let start = ContinuousClock.now
        let session: any InferenceSession
        switch pool.acquire(abandon: { channel.clientGone }) {
        case .slot(let s): session = s
        case .abandoned: return 499
        case .queueFull:
            channel.send(busy(pool, "generation").response)
            return 503
        }
        // The slot goes back before the last bytes of the answer leave, so a client that sends its next request as
        // soon as this one is answered finds it free.
        var held = true
        func giveBack() {
            if held { pool.release(session) }
            held = false
        }
        defer { giveBack() }
        session.reset()
        let prompt: String
        switch request.prompt {
        case .text(let t): prompt = t
        case .chat(let messages):
            do {
                prompt = try session.applyChatTemplate(messages, addAssistantPrompt: true, override: chatTemplate)
            } catch {
                channel.send(APIError(400, "\(error)", param: "messages").response)
                return 400
            }
        }
        let reply = CompletionReply(
            chat: { if case .chat = request.prompt { return true } else { return false } }(), model: modelID,
            stream: request.stream, includeUsage: request.includeUsage, channel: channel)
        let parameters = request.parameters
        let metrics = metrics
        let toolMode = request.tools != nil
        let outcome =
            channel.runCancellable { () -> GenerationOutcome in
                var outcome = GenerationOutcome()
                var last = start
                do {
                    for try await event in session.generate(.text(prompt, parseSpecial: true), parameters: parameters) {
                        switch event {
                        case .token(_, let piece):
                            let now = ContinuousClock.now
                            let gap = last.duration(to: now)
                            if outcome.tokens == 0 {
                                metrics.timeToFirstToken(seconds(gap))
                            } else {
                                metrics.interTokenLatency(seconds(gap))
                            }
                            last = now
                            outcome.tokens += 1
                            outcome.text += piece
                            // A tool envelope is answered whole at the end, not streamed as raw JSON.
                            if toolMode ? channel.clientGone : !reply.piece(piece) { return outcome }
                        case .finished(let reason, let stats):
                            outcome.finish = reason
                            outcome.stats = stats
                        }
                    }
                } catch {
                    outcome.error = error
                }
                return outcome
            } ?? GenerationOutcome()
        giveBack()
        metrics.tokens(prompt: outcome.stats.promptTokens, generated: outcome.tokens)
        if let error = outcome.error {
            return reply.fail(generationError(error, constrained: parameters.constraint != nil && outcome.tokens == 0))
        }
        guard let finish = outcome.finish, finish != .cancelled else { return 499 }
        if toolMode { return answerTools(outcome, finish: finish, maxTokens: parameters.maxTokens, reply) }
        return reply.end(text: outcome.text, finish: finish, stats: outcome.stats)
    }

    /// The generated tool envelope as OpenAI's answer: a `tool_calls` message, or (with `tool_choice: "auto"`) the
    /// text answer it holds.
    private func answerTools(_ outcome: GenerationOutcome, finish: StopReason, maxTokens: Int, _ reply: CompletionReply)
        -> Int
    {
        guard finish == .endOfGeneration, let envelope = try? StrictJSON().parse(Array(outcome.text.utf8)) else {
            return reply.fail(
                APIError(
                    400,
                    "the tool call was not complete within max_tokens (\(maxTokens)) tokens; raise max_tokens",
                    param: "max_tokens", code: "length"))
        }
        if let name = envelope["tool"]?.stringValue, let arguments = envelope["arguments"] {
            return reply.endToolCall(name: name, arguments: arguments.jsonString, stats: outcome.stats)
        }
        let content = envelope["content"]?.stringValue ?? ""
        _ = reply.piece(content)
        return reply.end(text: content, finish: .endOfGeneration, stats: outcome.stats)
    }
}

/// The 503 for a full queue (`what`: whose slots).
func busy<Slot>(_ pool: SlotPool<Slot>, _ what: String) -> APIError {
    APIError(
        503,
        "all \(pool.total) \(what) slots are busy and \(pool.queueCapacity) requests are waiting; retry shortly",
        type: "server_error", code: "server_busy")
}

/// A generation's failure as an API error: a prompt beyond the context and a schema the engine cannot apply are
/// the request's fault (400), anything else the server's.
func generationError(_ error: any Error, constrained: Bool) -> APIError {
    if case .promptTooLong = error as? SanadError {
        return APIError(400, "\(error)", param: "messages", code: "context_length_exceeded")
    }
    if constrained { return APIError(400, "\(error)", param: "response_format", code: "unsupported_value") }
    return APIError(500, "\(error)", type: "server_error")
}

/// What one generation produced.
struct GenerationOutcome: Sendable {
    var text = ""
    var tokens = 0
    var finish: StopReason?
    var stats = GenerationStats()
    var error: (any Error)?
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

/// OpenAI's finish reasons.
func finishReason(_ reason: StopReason) -> String {
    switch reason {
    case .maxTokens, .contextFull: return "length"
    default: return "stop"
    }
}

/// Writes a completion in OpenAI's shapes: chat or text, one body or server-sent events.
final class CompletionReply: @unchecked Sendable {  // used by the one task generating the reply, then by the
    // connection thread after that task has ended
    let chat: Bool
    let model: String
    let stream: Bool
    let includeUsage: Bool
    let channel: ResponseChannel
    let id: String
    let created = Int(Date().timeIntervalSince1970)
    private var started = false

    init(chat: Bool, model: String, stream: Bool, includeUsage: Bool, channel: ResponseChannel) {
        self.chat = chat
        self.model = model
        self.stream = stream
        self.includeUsage = includeUsage
        self.channel = channel
        self.id = (chat ? "chatcmpl-" : "cmpl-") + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }

    private var object: String { chat ? (stream ? "chat.completion.chunk" : "chat.completion") : "text_completion" }

    private func envelope(_ choices: JSONValue, usage: JSONValue? = nil) -> String {
        var o: [String: JSONValue] = [
            "id": .string(id), "object": .string(object), "created": .number(Double(created)),
            "model": .string(model), "choices": choices,
        ]
        if let usage { o["usage"] = usage }
        return JSONValue.object(o).jsonString
    }

    private func choice(text: String, finish: String?, first: Bool = false) -> JSONValue {
        var c: [String: JSONValue] = ["index": .number(0), "finish_reason": finish.map(JSONValue.string) ?? .null]
        if !chat {
            c["text"] = .string(text)
            c["logprobs"] = .null
        } else if stream {
            var delta: [String: JSONValue] = [:]
            if first { delta["role"] = .string("assistant") }
            if !text.isEmpty || first { delta["content"] = .string(text) }
            c["delta"] = .object(delta)
        } else {
            c["message"] = .object(["role": .string("assistant"), "content": .string(text)])
            c["logprobs"] = .null
        }
        return .array([.object(c)])
    }

    private func startIfNeeded() {
        guard stream, !started else { return }
        started = true
        channel.startStream(
            status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        if chat { channel.write(serverSentEvent(envelope(choice(text: "", finish: nil, first: true)))) }
    }

    /// Sends a piece of text as it is generated (streaming only); false when the client is gone.
    func piece(_ text: String) -> Bool {
        guard stream else { return true }
        startIfNeeded()
        guard !text.isEmpty else { return !channel.clientGone }
        return channel.write(serverSentEvent(envelope(choice(text: text, finish: nil))))
    }

    private func usage(_ stats: GenerationStats) -> JSONValue {
        .object([
            "prompt_tokens": .number(Double(stats.promptTokens)),
            "completion_tokens": .number(Double(stats.generatedTokens)),
            "total_tokens": .number(Double(stats.promptTokens + stats.generatedTokens)),
        ])
    }

    /// The end of a reply; returns the status sent.
    func end(text: String, finish: StopReason, stats: GenerationStats) -> Int {
        guard stream else {
            channel.send(.json(200, envelope(choice(text: text, finish: finishReason(finish)), usage: usage(stats))))
            return 200
        }
        startIfNeeded()
        channel.write(serverSentEvent(envelope(choice(text: "", finish: finishReason(finish)))))
        return endStream(stats)
    }

    /// The end of a reply that calls a function: a `tool_calls` message (finish reason `tool_calls`), or in a
    /// stream one delta with the whole call, then the finish.
    func endToolCall(name: String, arguments: String, stats: GenerationStats) -> Int {
        var call: [String: JSONValue] = [
            "id": .string("call_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)),
            "type": .string("function"),
            "function": .object(["name": .string(name), "arguments": .string(arguments)]),
        ]
        guard stream else {
            let message: JSONValue = .object([
                "role": .string("assistant"), "content": .null, "tool_calls": .array([.object(call)]),
            ])
            let choice: JSONValue = .object([
                "index": .number(0), "finish_reason": .string("tool_calls"), "message": message, "logprobs": .null,
            ])
            channel.send(.json(200, envelope(.array([choice]), usage: usage(stats))))
            return 200
        }
        startIfNeeded()
        call["index"] = .number(0)
        let delta: JSONValue = .object([
            "index": .number(0), "finish_reason": .null, "delta": .object(["tool_calls": .array([.object(call)])]),
        ])
        channel.write(serverSentEvent(envelope(.array([delta]))))
        let finish: JSONValue = .object([
            "index": .number(0), "finish_reason": .string("tool_calls"), "delta": .object([:]),
        ])
        channel.write(serverSentEvent(envelope(.array([finish]))))
        return endStream(stats)
    }

    private func endStream(_ stats: GenerationStats) -> Int {
        if includeUsage { channel.write(serverSentEvent(envelope(.array([]), usage: usage(stats)))) }
        channel.write(serverSentEvent("[DONE]"))
        channel.endStream()
        return 200
    }

    /// An error: a JSON error body, or an error event when the stream has begun.
    func fail(_ error: APIError) -> Int {
        guard started else {
            channel.send(error.response)
            return error.status
        }
        channel.write(
            serverSentEvent(openAIErrorJSON(error.message, type: error.type, param: error.param, code: error.code)))
        channel.write(serverSentEvent("[DONE]"))
        channel.endStream()
        return error.status
    }
}
