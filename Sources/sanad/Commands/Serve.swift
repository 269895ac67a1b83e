import Foundation
import GGUF
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import SanadReceipts
import SanadServer

/// `sanad serve`: the tier's model behind an OpenAI-compatible HTTP API.
enum ServeCommand: SanadCommand {
    static let name = "serve"
    static let summary = "Serve the tier's model over an OpenAI-compatible HTTP API"
    static let help = """
        Usage: sanad serve [--host HOST] [--port PORT] [--slots N] [--queue N] [--api-key KEY] [-m MODEL] \
        [--backend ID] [--chat-template NAME|FILE] [-c CTX] [-t THREADS] [-n N] [--read-timeout S] [--idle-timeout S] [--max-body BYTES] \
        [--no-embeddings] [--no-web-chat] [--receipts] [--receipt-include-text] [--allowed-hosts NAMES] [--allowed-origins ORIGINS] [--show-drafts] [--phrasing model|template] [--lang ar|en] [--now DATE] [--user FILE] [--no-memory-check] [--allow-long-context]

        Serves GET /health, GET /metrics (Prometheus text), GET /v1/models, POST /v1/chat/completions,
        POST /v1/completions (both streamed as server-sent events with "stream": true) and POST /v1/embeddings (the
        tier's embedding model), and at / the web chat: the product's assistant (greeting, the plugins'
        suggestion chips, streamed grounded replies, deep-link buttons that open their page), with the plugins'
        places beside it (at /forms the forms: templates, sessions, one question at a time, review, downloads; the
        same store as 'sanad form'). Each of the N slots
        answers one request at a time. On the local engines (pure-swift, blas, llama) the slots share one loaded
        model and all the threads, and the generation steps of requests running at the same time go through the
        model as one batch (continuous batching); on the others each slot is a copy with a share of the threads. Up to
        --queue more requests wait for a slot, and beyond that a request is answered 503 with Retry-After. A client
        that disconnects stops its generation within a token. SIGINT or SIGTERM stops accepting and lets requests in
        progress finish (10 s), then exits 0; a second signal exits at once (130).

        Options:
          --host HOST            address to bind (default 127.0.0.1); any other than loopback needs --api-key
          --port PORT            TCP port (default 8080; 0 = any free port, printed at startup)
          --slots N              requests generated at the same time (default 1; batched on pure-swift, blas, llama)
          --queue N              requests that may wait for a slot (default 16)
          --api-key KEY          require 'Authorization: Bearer KEY' (all paths but /health; the web app's
                                 pages ask for it on a login page and keep it in an HttpOnly cookie); default
                                 SANAD_API_KEY
          -m, --model MODEL      a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID           engine to use (default: the first available of the tier's list)
          --chat-template NAME|FILE
                                 a built-in family (chatml, gemma, llama3) or a Jinja file instead of the
                                 model's own template, for /v1/chat/completions and the web chat
          -c, --ctx CTX          context length per slot (default: the tier's)
          -t, --threads N        compute threads per slot (default: the tier's, divided among the slots)
          -n, --max-tokens N     tokens per reply when the request gives no max_tokens (default 512)
          --read-timeout S       seconds a client has to send a whole request (from connecting, for its first;
                                 default 10); connections waiting or sending take no thread
          --idle-timeout S       seconds a kept-alive connection may stay idle (default 30)
          --max-body BYTES       largest request body (default 4194304; 413 beyond)
          --no-embeddings        do not load the tier's embedding model (/v1/embeddings answers 404)
          --no-web-chat          do not serve the web chat at / (nor its /chat/* requests)
          --receipts             every chat and text completion carries a signed receipt of its generation (README.md,
                                 "Receipts"): a "receipt" object in the response, in a stream the last event before
                                 [DONE]; a request opts out with "receipt": false. Without it a request opts in
                                 with "receipt": true (or {"include_text": true}); either way n above 1 is refused
          --receipt-include-text receipts also state the prompt and output text and token ids (which a replay
                                 needs; a request's "receipt": {"include_text": …} decides for itself)
          --lang ar|en           the web chat's language when the page does not ask for one (its ?lang=): the
                                 greeting, chips and pages; each reply follows its message's language
          --show-drafts          the web chat also sends each grounded reply's model draft (a "draft" event
                                 before the reply, and the check's "draft" with why it failed); for debugging only:
                                 without it a browser receives nothing but the verified reply
        \(phrasingHelp)
          --allowed-hosts NAMES  Host names answered besides loopback's and --host's (comma-separated; * = any);
                                 other Host headers get 400 (DNS rebinding)
          --allowed-origins ORIGINS
                                 web origins (http://site:port, comma-separated; * = any) whose pages may call the
                                 API, besides this server's own (CORS: preflights answered, Access-Control-Allow-
                                 Origin sent; none by default); every POST needs Content-Type: application/json
        \(PluginHost.clockHelp)
        \(PluginHost.userHelp)
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let host = try arguments.option("--host") ?? "127.0.0.1"
        let port = try arguments.int("--port", range: 0...65535) ?? 8080
        let slots = try arguments.int("--slots", range: 1...64) ?? 1
        let queue = try arguments.int("--queue", range: 0...4096) ?? 16
        let apiKey = try arguments.option("--api-key") ?? ProcessInfo.processInfo.environment["SANAD_API_KEY"]
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let chatTemplate = try arguments.option("--chat-template", "--template").map(parseTemplate)
        let context = try arguments.int("-c", "--ctx", range: 16...1 << 24)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let maxTokens = try arguments.int("-n", "--max-tokens", range: 1...1 << 20) ?? 512
        var options = HTTPServerOptions()
        options.readTimeout = try arguments.double("--read-timeout") ?? options.readTimeout
        options.idleTimeout = try arguments.double("--idle-timeout") ?? options.idleTimeout
        options.limits.maximumBodyBytes =
            try arguments.int("--max-body", range: 1024...1 << 30) ?? options.limits.maximumBodyBytes
        let noEmbeddings = arguments.flag("--no-embeddings")
        let noWebChat = arguments.flag("--no-web-chat")
        let showDrafts = arguments.flag("--show-drafts")
        let receiptsByDefault = arguments.flag("--receipts")
        let receiptText = arguments.flag("--receipt-include-text")
        let phrasing = try parsePhrasing(&arguments)
        let language = try parseLanguage(arguments.option("--lang"))
        let browserPolicy = BrowserPolicy(
            bindHost: host, allowedHosts: try arguments.list("--allowed-hosts") ?? [],
            allowedOrigins: try arguments.list("--allowed-origins") ?? [])
        let clock = try PluginHost.clock(&arguments)
        let load = try LoadFlags.parse(&arguments)
        let hostContext = try HostContext.load(&arguments)
        let user = try PluginHost.userFile(&arguments, host: hostContext)
        try arguments.finish()
        guard (0.001...86400).contains(options.readTimeout), (0.001...86400).contains(options.idleTimeout) else {
            throw UsageError("--read-timeout and --idle-timeout must be in 0.001…86400 seconds")
        }
        if let apiKey, apiKey.isEmpty { throw UsageError("--api-key must not be empty") }
        if !isLoopback(host) && apiKey == nil {
            throw UsageError(
                "binding '\(host)' exposes the model beyond this machine; pass --api-key KEY (or set SANAD_API_KEY)")
        }

        var request = ModelRequest(
            model: modelName, backend: backendID, threads: threads, contextLength: context,
            checkMemory: load.checkMemory, allowLongContext: load.allowLongContext,
            cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV)
        var plan = try hostContext.planModel(request)
        // Slots of an engine that does not batch are copies that share the cores: unless -t says otherwise, the
        // tier's threads are divided among them (slots that together ask for more threads than there are cores slow
        // each other down several times over). Batched slots run one forward pass at a time, on all the threads.
        if threads == nil && slots > 1 && !plan.backend.sharesForwardPasses {
            request.threads = max(1, (hostContext.config.threads ?? CPUAvailability.defaultThreads) / slots)
            plan = try hostContext.planModel(request)
        }
        let sessions = try await hostContext.opener.open(plan, count: slots)
        let modelID = plan.url.deletingPathExtension().lastPathComponent
        var embedding: (any EmbeddingModel)?
        var embeddingID: String?
        if !noEmbeddings, let choice = hostContext.config.embedding {
            do {
                embedding = try await hostContext.openEmbeddingModel(model: nil, backend: nil, threads: threads)
                embeddingID = URL(fileURLWithPath: choice.model).deletingPathExtension().lastPathComponent
            } catch {
                printError("note: serving without embeddings: \(error)")
            }
        }
        let receipts = ServerReceipts(byDefault: receiptsByDefault, includeText: receiptText) { [plan] in
            try receiptIssuer(plan)
        }
        if receiptsByDefault {
            // Hashed now, not in the first request.
            let issuer = try receipts.issuer()
            printError(
                "receipts: every answer signed by device key \(issuer.key.keyID) (model hashed in "
                    + "\(String(format: "%.0f", issuer.hashingSeconds * 1000)) ms)")
        }
        let metrics = ServerMetrics()
        let pool = SlotPool(sessions, queueCapacity: queue)
        var webChat: WebChatService?
        let product = hostContext.product
        if !noWebChat, product.webPage == nil {
            printError("note: no web chat: the product '\(product.id)' has no web page (its webchat.html is missing)")
        }
        if !noWebChat, let page = product.webPage {
            let plugins = try PluginHost.makePlugins(hostContext, now: clock, userData: user)
            webChat = WebChatService(
                pool: pool, reference: sessions[0], linkFormat: product.linkFormat, page: page,
                languages: product.languages, places: plugins.compactMap(\.webPlace), loginPage: product.loginPage
            ) { borrowed, asked in
                var configuration = product.configuration(language: asked ?? language)
                configuration.generation.maxTokens = min(maxTokens, configuration.generation.maxTokens)
                configuration.showDrafts = showDrafts
                configuration.groundedPhrasing = phrasing ?? hostContext.config.groundedPhrasing
                if let chatTemplate { configuration.template = chatTemplate }
                return ChatSession(plugins: plugins, configuration: configuration, now: clock) { borrowed }
            }
        }
        let service = OpenAIService(
            modelID: modelID, pool: pool, embedding: embedding, embeddingModelID: embeddingID, apiKey: apiKey,
            metrics: metrics, defaultMaxTokens: maxTokens, maximumBodyBytes: options.limits.maximumBodyBytes,
            webChat: webChat, browserPolicy: browserPolicy,
            properties: Self.properties(of: plan), chatTemplate: chatTemplate, receipts: receipts)
        options.admit = { service.admit($0) }
        let server = try HTTPServer(host: host, port: port, options: options) { service.handle($0, $1) }
        // SIGINT/SIGTERM: stop accepting and let requests in progress finish; a second signal exits at once.
        Interruption.shared.handle { server.shutdown() }
        let base = "http://\(host.contains(":") ? "[\(host)]" : host):\(server.port)"
        print(
            "sanad serve: model \(modelID) (backend \(plan.backend.id), \(slots) slot\(slots == 1 ? "" : "s")"
                + (slots > 1 && plan.backend.sharesForwardPasses ? " batched on " : " × ")
                + "\(plan.options.threads) thread\(plan.options.threads == 1 ? "" : "s"), queue "
                + "\(queue), context \(plan.options.contextLength.map(String.init) ?? "model's"), tier "
                + "\(hostContext.config.tier))")
        if let embeddingID { print("embeddings: \(embeddingID)") }
        print("listening on \(base)\(apiKey == nil ? "" : " (API key required)")")
        for route in service.allRoutes {
            print("  \(route.method.padding(toLength: 5, withPad: " ", startingAt: 0))\(base)\(route.path)")
        }
        print("Ctrl-C or SIGTERM stops (requests in progress get \(Int(options.shutdownGrace)) s)")
        await server.run()
        printError("sanad serve: stopped")
        return ExitCode.success
    }

    /// `/props`'s model path, engine and chat template (the GGUF's Jinja text and the family applied).
    static func properties(of plan: ModelPlan) -> ServerProperties {
        let jinja = (try? GGUFFile(path: plan.url.path))?.string("tokenizer.chat_template")
        return ServerProperties(
            modelPath: plan.url.path, backend: plan.backend.id, chatTemplate: jinja,
            chatTemplateFamily: jinja.flatMap(ChatTemplate.detect)?.rawValue)
    }

    /// Whether `host` is this machine only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
