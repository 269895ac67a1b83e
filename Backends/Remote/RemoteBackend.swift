import Foundation
import GGUF
import SanadCore
import SanadTokenizers

/// The `openai` engine: any OpenAI-compatible server (`sanad serve`, llama.cpp's `llama-server`, vLLM, Ollama) runs
/// the model; Sanad keeps the tokenizer and chat template of the local GGUF file (the same model), so prompts,
/// plugins and chat stay local. Options in the tier config: `url` (required, `http://host:port` or
/// `https://host[:port]`: HTTPS through the system libcurl, certificates verified), `model` (the server's model id),
/// `apiKey`, `timeout` (seconds without a byte before giving up, default 120), `caFile` (a PEM bundle of extra CAs
/// to trust for https, e.g. a private CA).
public struct RemoteBackend: InferenceBackend, OptionsValidatingBackend {
    public let id = "openai"
    public let summary =
        "an OpenAI-compatible server as the engine (sanad serve, llama-server, vLLM, Ollama); tokenizer and chat "
        + "template from the local GGUF"

    public init() {}

    public var availability: BackendAvailability {
        .unavailable(reason: "needs `url` in the tier config's options for 'openai' (http://host:port or https://…)")
    }

    public func availability(options: [String: JSONValue]) -> BackendAvailability {
        guard let parsed = try? RemoteOptions(parsing: options), let url = parsed.url else { return availability }
        var detail = url.absoluteString + (parsed.model.map { " model \($0)" } ?? "")
        if url.scheme == "https" {
            switch LibCurl.shared {
            case .success(let curl):
                detail += " (\(curl.version.split(separator: " ").prefix(2).joined(separator: " ")))"
            case .failure(let error): return .unavailable(reason: "https:// needs libcurl: \(error)")
            }
        }
        return .available(detail: detail)
    }

    public func validateOptions(_ options: [String: JSONValue]) throws { _ = try RemoteOptions(parsing: options) }

    /// A remote engine runs the models of its server, never a local file.
    public func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport {
        .cannot(reason: "it runs its server's models, not local files")
    }

    public func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession {
        let remote = try RemoteOptions(parsing: options.engineOptions)
        guard let server = remote.url else { throw SanadError.backendUnavailable(id: id, reason: availabilityReason) }
        return try RemoteSession(path: url.path, server: server, options: remote, contextLength: options.contextLength)
    }

    private var availabilityReason: String {
        if case .unavailable(let reason) = availability { return reason }
        return ""
    }
}

/// The `openai` engine's options.
struct RemoteOptions {
    var url: URL?
    var model: String?
    var apiKey: String?
    var timeout: Double = 120
    var caFile: String?

    init(parsing options: [String: JSONValue]) throws {
        let reader = try OptionReader(options, allowed: ["url", "model", "apiKey", "timeout", "caFile"]) {
            key, problem in
            SanadError.invalidConfig(file: "", keyPath: "backends[openai].options.\(key)", problem: problem)
        }
        if let text = try reader.string("url", expected: "an http://host:port or https://host[:port] URL") {
            guard let u = URL(string: text), u.scheme == "http" || u.scheme == "https", u.host != nil else {
                throw reader.failure(
                    "url", "expected an http://host:port or https://host[:port] URL, found \"\(text)\"")
            }
            url = u
        }
        model = try reader.string("model")
        apiKey = try reader.string("apiKey")
        if let t = try reader.int("timeout", range: 1...86400) { timeout = Double(t) }
        if let file = try reader.string("caFile", expected: "a PEM file of CA certificates") {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw reader.failure("caFile", "\(file) is not a readable file")
            }
            caFile = file
        }
    }
}

/// A model served elsewhere, with the local file's tokenizer and chat template.
final class RemoteSession: InferenceSession, @unchecked Sendable {  // every stored property is immutable
    let model: ModelDescription
    private let file: GGUFFile
    private let tokenizer: Tokenizer
    private let server: URL
    private let options: RemoteOptions
    private let chatTemplate: ModelChatTemplate

    init(path: String, server: URL, options: RemoteOptions, contextLength: Int?) throws {
        file = try GGUFFile(path: path)
        let tokenizer = try Tokenizer.load(from: file)
        self.tokenizer = tokenizer
        chatTemplate = ModelChatTemplate(
            file: file, bos: tokenizer.bos, eos: tokenizer.eos, addsBOS: tokenizer.addsBOS, addsEOS: tokenizer.addsEOS
        ) { tokenizer.decode([$0], renderSpecial: true) }
        self.server = server
        self.options = options
        let architecture = file.string("general.architecture") ?? "unknown"
        let training = file.int("\(architecture).context_length") ?? 0
        model = ModelDescription(
            name: file.string("general.name") ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
            architecture: architecture, parameterCount: file.parameterCount, fileSize: file.mapping.count,
            contextLength: contextLength ?? training, trainingContextLength: training,
            vocabularySize: tokenizer.vocabularySize, addsBOS: tokenizer.addsBOS, bosToken: tokenizer.bos,
            eosToken: tokenizer.eos)
    }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        tokenizer.decode(tokens, renderSpecial: renderSpecial)
    }

    func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try chatTemplate.apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    /// Streams `/v1/completions` from the server: each text piece is one event (its token id is -1: the server
    /// does not say). Cancelling stops reading and closes the connection within 0.1 s.
    func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        let prompt: String
        switch input {
        case .text(let t, _): prompt = t
        case .tokens(let ids): prompt = tokenizer.decode(ids, renderSpecial: true)
        }
        let server = server
        let options = options
        return AsyncThrowingStream { continuation in
            let task = Task.detached {
                do {
                    guard parameters.constraint == nil else {
                        throw SanadError.engine(
                            "the openai engine samples on the server and cannot apply a JSON schema constraint; "
                                + "use the pure-swift or blas engine")
                    }
                    try streamCompletion(
                        server: server, options: options, prompt: prompt, parameters: parameters
                    ) { continuation.yield($0) }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.yield(.finished(.cancelled, GenerationStats()))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        throw SanadError.engine("the openai engine gets text, not logits, from its server; use a local engine")
    }

    func append(_ tokens: [Int32]) throws {
        throw SanadError.engine("the openai engine keeps no cache here; use a local engine")
    }

    func reset() {}
}

/// One streamed `/v1/completions` request: yields each piece, then `.finished` with the server's token counts.
func streamCompletion(
    server: URL, options: RemoteOptions, prompt: String, parameters: GenerationParameters,
    yield: (GenerationEvent) -> Void
) throws {
    var body: [String: JSONValue] = [
        "prompt": .string(prompt), "max_tokens": .number(Double(max(1, parameters.maxTokens))),
        "temperature": .number(Double(parameters.sampling.temperature)),
        "top_p": .number(Double(parameters.sampling.topP)),
        "seed": .number(Double(parameters.sampling.seed % (1 << 53))),
        "stream": .bool(true), "stream_options": .object(["include_usage": .bool(true)]),
    ]
    if let model = options.model { body["model"] = .string(model) }
    if !parameters.stopStrings.isEmpty { body["stop"] = .array(parameters.stopStrings.prefix(4).map(JSONValue.string)) }
    let start = Date()
    let exchange = try openHTTPExchange(
        url: server, method: "POST", path: "/v1/completions", body: Array(JSONValue.object(body).jsonString.utf8),
        headers: options.apiKey.map { ["Authorization: Bearer \($0)"] } ?? [], timeout: options.timeout,
        caFile: options.caFile, isCancelled: { Task.isCancelled })
    guard exchange.status == 200 else {
        let text = String(decoding: try exchange.rest(), as: UTF8.self)
        let message = (try? JSONValue.parse(text))?["error"]?["message"]?.stringValue ?? text
        throw SanadError.engine(
            "the openai engine's server \(server.absoluteString) answered \(exchange.status): \(message)")
    }
    var stats = GenerationStats()
    var reason = StopReason.endOfGeneration
    var firstPiece: Date?
    var pieces = 0
    while let line = try exchange.nextLine() {
        guard line.hasPrefix("data: ") else { continue }
        let data = String(line.dropFirst(6))
        if data == "[DONE]" { break }
        guard let event = try? JSONValue.parse(data) else { continue }
        if let error = event["error"]?["message"]?.stringValue {
            throw SanadError.engine("the server failed: \(error)")
        }
        if let usage = event["usage"], usage != .null {
            stats.promptTokens = usage["prompt_tokens"]?.intValue ?? 0
            stats.generatedTokens = usage["completion_tokens"]?.intValue ?? pieces
        }
        guard let choice = event["choices"]?.arrayValue?.first else { continue }
        if let text = choice["text"]?.stringValue, !text.isEmpty {
            if firstPiece == nil { firstPiece = Date() }
            pieces += 1
            yield(.token(id: -1, text: text))
        }
        if let finish = choice["finish_reason"]?.stringValue {
            reason = finish == "length" ? .maxTokens : .endOfGeneration
        }
    }
    if stats.generatedTokens == 0 { stats.generatedTokens = pieces }
    let first = firstPiece ?? Date()
    stats.promptSeconds = first.timeIntervalSince(start)
    stats.generationSeconds = Date().timeIntervalSince(first)
    yield(.finished(reason, stats))
}
