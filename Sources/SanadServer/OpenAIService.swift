import Foundation
import SanadCore
import SanadReceipts

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
    private let properties: ServerProperties
    /// `--chat-template`: applied instead of each model's own template; nil = the model's.
    private let chatTemplate: ChatPromptTemplate?
    /// Signed receipts of answers (`--receipts`, or a request's `receipt`); nil: this server signs none.
    private let receipts: ServerReceipts?

    public init(
        modelID: String, pool: SlotPool<any InferenceSession>, embedding: (any EmbeddingModel)?,
        embeddingModelID: String?,
        apiKey: String?, metrics: ServerMetrics, defaultMaxTokens: Int, maximumBodyBytes: Int,
        webChat: WebChatService? = nil, browserPolicy: BrowserPolicy = BrowserPolicy(bindHost: "127.0.0.1"),
        properties: ServerProperties = ServerProperties(), chatTemplate: ChatPromptTemplate? = nil,
        receipts: ServerReceipts? = nil
    ) {
        self.receipts = receipts
        self.properties = properties
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
        ("POST", "/v1/completions"), ("POST", "/v1/embeddings"), ("POST", "/tokenize"), ("POST", "/detokenize"),
        ("GET", "/props"), ("GET", "/slots"),
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

    /// The 401 for a request without the API key (as `Authorization: Bearer KEY`, or the web app's login cookie):
    /// every path needs it but `/health`, the login call, and the web app's pages (which get the login page).
    private func keyRefusal(_ head: HTTPRequestHead) -> APIError? {
        guard let apiKey, head.path != "/health", head.method != "OPTIONS", !isLoginCall(head), !isWebPage(head),
            !isWebAsset(head), credential(head) == nil
        else { return nil }
        return APIError(
            401, "a valid API key is required (Authorization: Bearer KEY, or sign in on the web app's page)",
            code: "invalid_api_key")
    }

    /// How the request carries the API key: `bearer` (`Authorization`), `cookie` (the web app's login), or nil.
    private func credential(_ head: HTTPRequestHead) -> String? {
        guard let apiKey else { return nil }
        if bearerMatches(head.header("authorization"), key: apiKey) { return "bearer" }
        return WebLogin.cookieMatches(head, key: apiKey) ? "cookie" : nil
    }

    /// A web app page (`/`, a place's own path), asked with GET or HEAD.
    private func isWebPage(_ head: HTTPRequestHead) -> Bool {
        guard let webChat, head.method == "GET" || head.method == "HEAD" else { return false }
        return head.path == "/" || webChat.place(for: head.path)?.prefix == head.path
    }

    /// The pages' shared style and script (`WebAppAssets`): no secret in them, and the login page uses them.
    private func isWebAsset(_ head: HTTPRequestHead) -> Bool {
        webChat != nil && (head.method == "GET" || head.method == "HEAD") && WebAppAssets.files[head.path] != nil
    }

    /// `POST /login` or `/logout` of a server with a web app and an API key.
    private func isLoginCall(_ head: HTTPRequestHead) -> Bool {
        webChat != nil && apiKey != nil && [WebLogin.path, WebLogin.logoutPath].contains(head.path)
    }

    /// The login's answers, before any route: the login and logout calls, and the login page for a web app page
    /// asked without the key; nil for every other request. A change made on the strength of the login cookie
    /// must come from this server's own pages (an `Origin` of this server).
    private func loginAnswer(_ request: HTTPRequest) -> HTTPResponse? {
        let head = request.head
        guard let apiKey, let webChat else { return nil }
        if isLoginCall(head) {
            guard head.method == "POST" else {
                return APIError(405, "\(head.path) takes POST, not \(head.method)", code: "method_not_allowed")
                    .response
            }
            if let refused = browserPolicy.checkStateChanging(head, originRequired: true) { return refused.response }
            if head.path == WebLogin.logoutPath {
                return .json(
                    200, #"{"ok":true}"#,
                    headers: [("Set-Cookie", WebLogin.setCookie(nil, secure: WebLogin.overTLS(head)))])
            }
            do { return try WebLogin.login(request, key: apiKey) } catch { return error.response }
        }
        let signedIn = credential(head)
        if isWebPage(head), signedIn == nil { return WebLogin.page(webChat.loginPage) }
        if signedIn == "cookie", head.method == "POST",
            let refused = browserPolicy.checkStateChanging(head, originRequired: true)
        {
            return refused.response
        }
        return nil
    }

    /// The API's routes and, when it is on, the web chat's.
    public var allRoutes: [(method: String, path: String)] {
        Self.routes
            + (webChat.map {
                WebChatService.routes + $0.places.map { ("GET", $0.prefix) }
                    + (apiKey == nil ? [] : [("POST", WebLogin.path), ("POST", WebLogin.logoutPath)])
            } ?? [])
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
        channel.extraHeaders = browserPolicy.corsHeaders(request.head)
        if let answer = loginAnswer(request) { return send(answer) }
        if let webChat, let place = webChat.place(for: path) {
            // A plugin's place: its page and downloads by GET, its changes by POST (JSON, this server's pages).
            guard ["GET", "HEAD", "POST"].contains(method) else {
                return send(
                    APIError(405, "\(path) takes GET or POST, not \(method)", code: "method_not_allowed").response)
            }
            if method == "POST", let refused = browserPolicy.checkStateChanging(request.head) {
                return send(refused.response)
            }
            if let refused = keyRefusal(request.head) { return send(refused.response) }
            return webChat.respond(request, place: place, channel)
        }
        guard let route = allRoutes.first(where: { $0.path == path }) else {
            return send(APIError(404, "no route \(method) \(path)", code: "not_found").response)
        }
        let methods = route.method == "GET" ? ["GET", "HEAD"] : [route.method]
        if method == "OPTIONS" { return send(browserPolicy.preflight(request.head, methods: methods)) }
        guard methods.contains(method) else {
            var refused = APIError(405, "\(path) takes \(route.method), not \(method)", code: "method_not_allowed")
                .response
            refused.headers.append(("Allow", (methods + ["OPTIONS"]).joined(separator: ", ")))
            return send(refused)
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
            case "/props":
                return send(.json(200, props().jsonString))
            case "/slots":
                return send(.json(200, slotStates().jsonString))
            case "/tokenize":
                return send(.json(200, try tokenize(decodeJSONObject(request.body, maximumBytes: maximumBodyBytes))))
            case "/detokenize":
                return send(
                    .json(200, try detokenize(decodeJSONObject(request.body, maximumBytes: maximumBodyBytes))))
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

    /// The model every slot holds (slot 0's session answers for all: tokenizing is read-only).
    private var model: ModelDescription { pool.slots[0].model }

    /// llama-server's `/props`: the model, its context, the chat template, the slots and the default sampling.
    private func props() -> JSONValue {
        let m = model
        let d = SamplingParameters()
        // A Float as its shortest decimal (0.05, not 0.05000000074505806).
        func decimal(_ v: Float) -> JSONValue { .number(Double("\(v)") ?? Double(v)) }
        let defaults: [String: JSONValue] = [
            "temperature": decimal(d.temperature), "top_k": .number(Double(d.topK)), "top_p": decimal(d.topP),
            "min_p": decimal(d.minP), "repeat_penalty": decimal(d.repetitionPenalty),
            "repeat_last_n": .number(Double(d.repetitionWindow)), "presence_penalty": decimal(d.presencePenalty),
            "frequency_penalty": decimal(d.frequencyPenalty), "max_tokens": .number(Double(defaultMaxTokens)),
            "seed": .string("random unless the request gives one"),
        ]
        return .object([
            "model_path": properties.modelPath.map(JSONValue.string) ?? .null, "model_alias": .string(modelID),
            "backend": properties.backend.map(JSONValue.string) ?? .null, "architecture": .string(m.architecture),
            "n_ctx": .number(Double(m.contextLength)), "n_ctx_train": .number(Double(m.trainingContextLength)),
            "n_vocab": .number(Double(m.vocabularySize)), "total_slots": .number(Double(pool.total)),
            "chat_template": properties.chatTemplate.map(JSONValue.string) ?? .null,
            "chat_template_family": properties.chatTemplateFamily.map(JSONValue.string) ?? .null,
            "embedding_model": embeddingModelID.map(JSONValue.string) ?? .null,
            "default_generation_settings": .object([
                "n_ctx": .number(Double(m.contextLength)), "params": .object(defaults),
            ]),
        ])
    }

    /// llama-server's `/slots`: each slot's id, context and whether a request holds it now.
    private func slotStates() -> JSONValue {
        let context = Double(model.contextLength)
        return .array(
            pool.busySlots(identity: { ObjectIdentifier($0) }).enumerated().map { id, busy in
                .object([
                    "id": .number(Double(id)), "n_ctx": .number(context), "is_processing": .bool(busy),
                    "state": .number(busy ? 1 : 0),
                ])
            })
    }

    /// llama-server's `/tokenize`: `content` → `tokens` (ids, or with `with_pieces` `{"id","piece"}` objects);
    /// `add_special` (default false) adds BOS as the model does, `parse_special` (default true) reads special-token
    /// text as its token.
    private func tokenize(_ body: [String: JSONValue]) throws(APIError) -> String {
        try checkFields(body, allowed: ["content", "add_special", "parse_special", "with_pieces"])
        guard let content = body["content"]?.stringValue else {
            throw APIError.invalid("content", "'content' must be a string")
        }
        func flag(_ key: String, _ fallback: Bool) throws(APIError) -> Bool {
            switch body[key] {
            case nil, .null: return fallback
            case .bool(let b): return b
            default: throw APIError.invalid(key, "'\(key)' must be true or false")
            }
        }
        let addSpecial = try flag("add_special", false)
        let parseSpecial = try flag("parse_special", true)
        let withPieces = try flag("with_pieces", false)
        let session = pool.slots[0]
        let tokens: [Int32]
        do {
            tokens = try session.tokenize(content, addSpecial: addSpecial, parseSpecial: parseSpecial)
        } catch {
            throw APIError(400, "the content cannot be tokenized: \(error)", param: "content")
        }
        let list: [JSONValue] = tokens.map { t in
            guard withPieces else { return .number(Double(t)) }
            return .object([
                "id": .number(Double(t)), "piece": .string(session.detokenize([t], renderSpecial: true)),
            ])
        }
        return JSONValue.object(["tokens": .array(list)]).jsonString
    }

    /// llama-server's `/detokenize`: `tokens` (ids in the vocabulary) → `content`, special tokens rendered.
    private func detokenize(_ body: [String: JSONValue]) throws(APIError) -> String {
        try checkFields(body, allowed: ["tokens"])
        let vocabulary = model.vocabularySize
        let ids = body["tokens"]?.arrayValue?.map { $0.doubleValue ?? -1 } ?? [-1]
        guard ids.allSatisfy({ $0 == $0.rounded() && $0 >= 0 && $0 < Double(vocabulary) }) else {
            throw APIError.invalid("tokens", "'tokens' must be an array of token ids in 0…\(vocabulary - 1)")
        }
        let text = pool.slots[0].detokenize(ids.map { Int32($0) }, renderSpecial: true)
        return JSONValue.object(["content": .string(text)]).jsonString
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
        let tokens: Int
        switch result {
        case .success(let batch):
            vectors = batch.vectors
            tokens = batch.tokenCounts?.reduce(0, +) ?? 0
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
                + "\"usage\":{\"prompt_tokens\":\(tokens),\"total_tokens\":\(tokens)}}")
    }

    /// A chat or text completion: waits for a slot (or answers 503 when the queue is full), generates each choice
    /// in turn on it (prompt by prompt, `n` each), and answers in one body or as server-sent events.
    private func complete(_ request: CompletionRequest, _ channel: ResponseChannel) -> Int {
        let start = ContinuousClock.now
        let receiptText: Bool?
        do { receiptText = try receiptWanted(request) } catch {
            channel.send(error.response)
            return error.status
        }
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
        let reply = CompletionReply(
            chat: { if case .chat = request.prompt { return true } else { return false } }(), model: modelID,
            stream: request.stream, includeUsage: request.includeUsage, channel: channel)
        // Prompt tokens once per prompt (as OpenAI counts them with n > 1), generated tokens of every choice.
        var usage = GenerationStats()
        for (p, input) in request.prompts.enumerated() {
            for k in 0..<request.choicesPerPrompt {
                let index = p * request.choicesPerPrompt + k
                session.reset()
                let prompt: String
                switch input {
                case .text(let t): prompt = t
                case .chat(let messages):
                    do {
                        prompt = try session.applyChatTemplate(
                            messages, addAssistantPrompt: true, override: chatTemplate)
                    } catch {
                        return reply.fail(APIError(400, "\(error)", param: "messages"))
                    }
                }
                var parameters = request.parameters
                parameters.sampling.seed &+= UInt64(index)
                let recorder = request.logprobs.map { LogProbabilityRecorder(topCount: $0) }
                parameters.logProbabilities = recorder
                let outcome = generateChoice(
                    prompt, parameters, on: session, index: index, reply, since: index == 0 ? start : .now,
                    streamed: request.tools == nil)
                metrics.tokens(prompt: outcome.stats.promptTokens, generated: outcome.tokens)
                if let error = outcome.error {
                    giveBack()
                    return reply.fail(
                        generationError(
                            error, constrained: parameters.constraint != nil && outcome.tokens == 0,
                            logprobs: recorder != nil && outcome.tokens == 0))
                }
                guard let finish = outcome.finish, finish != .cancelled else { return 499 }
                if let recorder, recorder.recorded.count < outcome.stats.generatedTokens {
                    giveBack()
                    return reply.fail(
                        APIError(
                            400, "this engine does not report log-probabilities; use a local engine",
                            param: "logprobs", code: "unsupported_value"))
                }
                if k == 0 { usage.promptTokens += outcome.stats.promptTokens }
                usage.generatedTokens += outcome.stats.generatedTokens
                if let receiptText {
                    do {
                        reply.receipt = try signReceipt(
                            prompt: prompt, chat: reply.chat, parameters: parameters, outcome: outcome,
                            finish: finish, session: session, includeText: receiptText)
                    } catch {
                        giveBack()
                        return reply.fail(
                            APIError(500, "the receipt could not be signed: \(error)", type: "server_error"))
                    }
                }
                if request.tools != nil {
                    giveBack()
                    return answerTools(outcome, finish: finish, maxTokens: parameters.maxTokens, reply)
                }
                reply.finishChoice(
                    index: index, text: outcome.text, finish: finish,
                    logprobs: recorder.map { request.stream ? $0.recorded(from: outcome.logprobsSent) : $0.recorded })
            }
        }
        giveBack()
        return reply.end(usage)
    }

    /// Whether `request`'s answer carries a receipt, and with text (nil: none).
    private func receiptWanted(_ request: CompletionRequest) throws(APIError) -> Bool? {
        guard let receipts else {
            guard request.receipt?.wanted != true else {
                throw APIError(
                    400, "this server signs no receipts (it has no device key); remove 'receipt'", param: "receipt",
                    code: "unsupported_value")
            }
            return nil
        }
        return try receipts.wanted(by: request)
    }

    /// The signed receipt of one finished generation, as a JSON object.
    private func signReceipt(
        prompt: String, chat: Bool, parameters: GenerationParameters, outcome: GenerationOutcome, finish: StopReason,
        session: any InferenceSession, includeText: Bool
    ) throws -> JSONValue {
        guard let receipts else { return .null }
        var record = try GenerationRecord(
            prompt: prompt, session: session, parameters: parameters,
            chatTemplate: chat ? chatTemplate?.description ?? "model" : nil)
        record.outputTokens = outcome.tokenIDs
        record.outputText = outcome.text
        record.stopReason = finish
        record.stats = outcome.stats
        return try receipts.issuer().signedObject(record, includeText: includeText)
    }

    /// One choice's generation on `session`: its pieces streamed as they come (unless `streamed` is false: a tool
    /// envelope is answered whole at the end), with the log-probabilities recorded for them so far.
    private func generateChoice(
        _ prompt: String, _ parameters: GenerationParameters, on session: any InferenceSession, index: Int,
        _ reply: CompletionReply, since start: ContinuousClock.Instant, streamed: Bool
    ) -> GenerationOutcome {
        let metrics = metrics
        let channel = reply.channel
        let recorder = parameters.logProbabilities
        return channel.runCancellable { () -> GenerationOutcome in
            var outcome = GenerationOutcome()
            var last = start
            do {
                for try await event in session.generate(.text(prompt, parseSpecial: true), parameters: parameters) {
                    switch event {
                    case .token(let id, let piece):
                        outcome.tokenIDs.append(id)
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
                        guard streamed else {
                            if channel.clientGone { return outcome }
                            continue
                        }
                        // Entries go with the text they make; a token that completes no character yet waits.
                        var entries: [GeneratedLogProbabilities]?
                        if let recorder, !piece.isEmpty {
                            let new = recorder.recorded(from: outcome.logprobsSent)
                            outcome.logprobsSent += new.count
                            entries = new
                        }
                        if !reply.piece(piece, index: index, logprobs: entries) { return outcome }
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
    }

    /// The generated tool envelope as OpenAI's answer: a `tool_calls` message, or (with `tool_choice: "auto"`) the
    /// text answer it holds.
    private func answerTools(_ outcome: GenerationOutcome, finish: StopReason, maxTokens: Int, _ reply: CompletionReply)
        -> Int
    {
        // The envelope closes within max_tokens (the constraint knows the limit): whole even when it ended on the
        // last token (`length`).
        guard let envelope = try? StrictJSON().parse(Array(outcome.text.utf8)) else {
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
        _ = reply.piece(content, index: 0, logprobs: nil)
        reply.finishChoice(index: 0, text: content, finish: .endOfGeneration, logprobs: nil)
        return reply.end(outcome.stats)
    }
}

/// What `/props` says about the served model beyond what its sessions tell.
public struct ServerProperties: Sendable {
    public var modelPath: String?
    public var backend: String?
    /// The GGUF's `tokenizer.chat_template` (Jinja), and the family Sanad applies.
    public var chatTemplate: String?
    public var chatTemplateFamily: String?

    public init(
        modelPath: String? = nil, backend: String? = nil, chatTemplate: String? = nil, chatTemplateFamily: String? = nil
    ) {
        self.modelPath = modelPath
        self.backend = backend
        self.chatTemplate = chatTemplate
        self.chatTemplateFamily = chatTemplateFamily
    }
}

/// The 503 for a full queue (`what`: whose slots).
func busy<Slot>(_ pool: SlotPool<Slot>, _ what: String) -> APIError {
    APIError(
        503,
        "all \(pool.total) \(what) slots are busy and \(pool.queueCapacity) requests are waiting; retry shortly",
        type: "server_error", code: "server_busy")
}

/// A generation's failure as an API error: a prompt beyond the context, a schema the engine cannot apply and
/// log-probabilities it cannot report (failures before the first token) are the request's fault (400), anything
/// else the server's.
func generationError(_ error: any Error, constrained: Bool, logprobs: Bool = false) -> APIError {
    if case .promptTooLong = error as? SanadError {
        return APIError(400, "\(error)", param: "messages", code: "context_length_exceeded")
    }
    if constrained { return APIError(400, "\(error)", param: "response_format", code: "unsupported_value") }
    if logprobs, case .engine = error as? SanadError {
        return APIError(400, "\(error)", param: "logprobs", code: "unsupported_value")
    }
    return APIError(500, "\(error)", type: "server_error")
}

/// What one generation produced.
struct GenerationOutcome: Sendable {
    var text = ""
    var tokens = 0
    /// The generated token ids (what a receipt states).
    var tokenIDs: [Int32] = []
    var finish: StopReason?
    var stats = GenerationStats()
    var error: (any Error)?
    /// Log-probability entries already streamed with the text.
    var logprobsSent = 0
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

/// Writes a completion in OpenAI's shapes: chat or text, one body or server-sent events; choices by index (a
/// stream sends each choice's chunks as it is generated, choice after choice).
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
    /// Chat streams: the choices whose first chunk (the role) went out.
    private var opened: Set<Int> = []
    /// A reply in one body: the finished choices by index.
    private var choices: [Int: JSONValue] = [:]
    /// Text completions: the byte offset of the next token's text in each choice (`text_offset`).
    private var offsets: [Int: Int] = [:]
    /// The answer's signed receipt: in the one body, or in a stream's last event before `[DONE]`.
    var receipt: JSONValue?

    init(chat: Bool, model: String, stream: Bool, includeUsage: Bool, channel: ResponseChannel) {
        self.chat = chat
        self.model = model
        self.stream = stream
        self.includeUsage = includeUsage
        self.channel = channel
        self.id = (chat ? "chatcmpl-" : "cmpl-") + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }

    private var object: String { chat ? (stream ? "chat.completion.chunk" : "chat.completion") : "text_completion" }

    private func envelope(_ choices: JSONValue, usage: JSONValue? = nil, receipt: JSONValue? = nil) -> String {
        var o: [String: JSONValue] = [
            "id": .string(id), "object": .string(object), "created": .number(Double(created)),
            "model": .string(model), "choices": choices,
        ]
        if let usage { o["usage"] = usage }
        if let receipt { o["receipt"] = receipt }
        return JSONValue.object(o).jsonString
    }

    /// One streamed choice: a chat delta (the role first) or a piece of text.
    private func streamedChoice(index: Int, text: String, finish: String?, logprobs: JSONValue, first: Bool = false)
        -> JSONValue
    {
        var c: [String: JSONValue] = [
            "index": .number(Double(index)), "finish_reason": finish.map(JSONValue.string) ?? .null,
            "logprobs": logprobs,
        ]
        if chat {
            var delta: [String: JSONValue] = [:]
            if first { delta["role"] = .string("assistant") }
            if !text.isEmpty || first { delta["content"] = .string(text) }
            c["delta"] = .object(delta)
        } else {
            c["text"] = .string(text)
        }
        return .array([.object(c)])
    }

    private func startIfNeeded(_ index: Int) {
        guard stream else { return }
        if !started {
            started = true
            channel.startStream(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        }
        if chat, opened.insert(index).inserted {
            channel.write(
                serverSentEvent(
                    envelope(streamedChoice(index: index, text: "", finish: nil, logprobs: .null, first: true))))
        }
    }

    /// Log-probabilities in the endpoint's shape: a chat's `{"content":[{token, logprob, bytes, top_logprobs}]}`, a
    /// text completion's `{tokens, token_logprobs, top_logprobs, text_offset}` (offsets in bytes of the choice's
    /// text).
    private func logprobsJSON(_ entries: [GeneratedLogProbabilities], index: Int) -> JSONValue {
        func text(_ t: TokenLogProbability) -> String { String(decoding: t.bytes, as: UTF8.self) }
        func value(_ t: TokenLogProbability) -> JSONValue {
            .number(t.logProbability.isFinite ? Double(t.logProbability) : -9999)
        }
        func described(_ t: TokenLogProbability) -> [String: JSONValue] {
            ["token": .string(text(t)), "logprob": value(t), "bytes": .array(t.bytes.map { .number(Double($0)) })]
        }
        guard !chat else {
            let content = entries.map { e -> JSONValue in
                var d = described(e.chosen)
                d["top_logprobs"] = .array(e.top.map { .object(described($0)) })
                return .object(d)
            }
            return .object(["content": .array(content), "refusal": .null])
        }
        var offset = offsets[index] ?? 0
        var textOffsets: [JSONValue] = []
        for e in entries {
            textOffsets.append(.number(Double(offset)))
            offset += e.chosen.bytes.count
        }
        offsets[index] = offset
        return .object([
            "tokens": .array(entries.map { .string(text($0.chosen)) }),
            "token_logprobs": .array(entries.map { value($0.chosen) }),
            "top_logprobs": .array(
                entries.map { e in
                    .object(Dictionary(e.top.map { (text($0), value($0)) }, uniquingKeysWith: { a, _ in a }))
                }),
            "text_offset": .array(textOffsets),
        ])
    }

    /// Sends a piece of choice `index`'s text as it is generated, with the log-probabilities of its tokens when
    /// asked for (streaming only); false when the client is gone.
    func piece(_ text: String, index: Int, logprobs: [GeneratedLogProbabilities]?) -> Bool {
        guard stream else { return true }
        startIfNeeded(index)
        guard !text.isEmpty else { return !channel.clientGone }
        let entries = logprobs.map { logprobsJSON($0, index: index) } ?? .null
        return channel.write(
            serverSentEvent(envelope(streamedChoice(index: index, text: text, finish: nil, logprobs: entries))))
    }

    private func usage(_ stats: GenerationStats) -> JSONValue {
        .object([
            "prompt_tokens": .number(Double(stats.promptTokens)),
            "completion_tokens": .number(Double(stats.generatedTokens)),
            "total_tokens": .number(Double(stats.promptTokens + stats.generatedTokens)),
        ])
    }

    /// The end of choice `index`: kept for the one body, or its finish chunk (with the log-probabilities not yet
    /// sent) in a stream.
    func finishChoice(index: Int, text: String, finish: StopReason, logprobs: [GeneratedLogProbabilities]?) {
        let reason = finishReason(finish)
        guard stream else {
            var c: [String: JSONValue] = [
                "index": .number(Double(index)), "finish_reason": .string(reason),
                "logprobs": logprobs.map { logprobsJSON($0, index: index) } ?? .null,
            ]
            if chat {
                c["message"] = .object(["role": .string("assistant"), "content": .string(text)])
            } else {
                c["text"] = .string(text)
            }
            choices[index] = .object(c)
            return
        }
        startIfNeeded(index)
        let rest = logprobs.flatMap { $0.isEmpty ? nil : logprobsJSON($0, index: index) } ?? .null
        channel.write(serverSentEvent(envelope(streamedChoice(index: index, text: "", finish: reason, logprobs: rest))))
    }

    /// The end of a reply, every choice finished: the one body, or the usage chunk (when asked for) and `[DONE]`.
    /// Returns the status sent.
    func end(_ stats: GenerationStats) -> Int {
        guard stream else {
            let list = choices.keys.sorted().compactMap { choices[$0] }
            channel.send(.json(200, envelope(.array(list), usage: usage(stats), receipt: receipt)))
            return 200
        }
        startIfNeeded(0)
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
            channel.send(.json(200, envelope(.array([choice]), usage: usage(stats), receipt: receipt)))
            return 200
        }
        startIfNeeded(0)
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
        if let receipt { channel.write(serverSentEvent(envelope(.array([]), receipt: receipt))) }
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
