import Foundation
import SanadCore
import SanadStructured

/// What a chat or text completion request asks for, decoded and checked.
public struct CompletionRequest: Sendable {
    public enum Prompt: Sendable, Equatable {
        case chat([ChatMessage])
        case text(String)
    }

    /// One prompt per input: a chat has one; `/v1/completions` takes an array (one choice group each).
    public var prompts: [Prompt]
    public var parameters: GenerationParameters
    public var stream: Bool
    /// `stream_options.include_usage`: a last chunk with the token counts.
    public var includeUsage: Bool
    /// The functions the client offers and whether a call is required (nil: no tools, or `tool_choice: "none"`).
    public var tools: ToolRequest? = nil
    /// `n`: independent choices per prompt (choice `k` of prompt `p` has index `p × n + k` and seed `seed + index`).
    public var choicesPerPrompt: Int = 1
    /// How many alternatives each token's log-probability entry lists; nil: no log-probabilities.
    public var logprobs: Int? = nil
    /// `receipt`: whether the answer carries a signed receipt (nil: as the server's `--receipts` says).
    public var receipt: ReceiptRequest? = nil

    /// The first (for a chat, the only) prompt.
    public var prompt: Prompt { prompts[0] }
}

/// The most choices one request may ask for, prompts × `n`: each runs in turn on the request's one slot.
public let maximumChoices = 16

/// The fields every generation endpoint reads (and the no-op `user`).
let generationFields: Set<String> = [
    "model", "max_tokens", "temperature", "top_p", "top_k", "min_p", "repeat_penalty", "repeat_last_n",
    "presence_penalty", "frequency_penalty", "seed", "stop", "n", "stream", "stream_options", "logprobs", "user",
    "receipt",
]
/// `POST /v1/chat/completions`'s fields; any other is a 400 naming it.
public let chatFields: Set<String> = generationFields.union([
    "messages", "max_completion_tokens", "top_logprobs", "response_format", "tools", "tool_choice",
    "parallel_tool_calls",
])
/// `POST /v1/completions`'s fields (`echo`, `best_of`, `suffix` and `logit_bias` only at their no-op values).
public let completionFields: Set<String> = generationFields.union(["prompt", "echo", "best_of", "suffix", "logit_bias"])
/// `POST /v1/embeddings`'s fields.
public let embeddingFields: Set<String> = ["model", "input", "encoding_format", "user"]

/// A 400 for the first field (in name order) that `allowed` does not hold and that is not null, and for a field
/// given at a value this server would not honour (`echo: true`, `best_of` other than `n`, a `suffix`, a non-empty
/// `logit_bias`, `stream_options` keys other than `include_usage`): nothing a request asks for is silently dropped.
public func checkFields(_ body: [String: JSONValue], allowed: Set<String>) throws(APIError) {
    for key in body.keys.sorted() where !allowed.contains(key) && body[key] != .null {
        throw APIError(
            400,
            "'\(key)' is not supported by this server, so it refuses the request rather than ignore it; remove it "
                + "(supported: \(allowed.sorted().joined(separator: ", ")))",
            param: key, code: "unsupported_parameter")
    }
    func unsupported(_ key: String, _ why: String) -> APIError {
        APIError(400, why, param: key, code: "unsupported_value")
    }
    if let echo = body["echo"], echo != .null, echo != .bool(false) {
        throw unsupported("echo", "'echo' is not supported (only false): the answer holds the generated text only")
    }
    if let suffix = body["suffix"], suffix != .null, suffix != .string("") {
        throw unsupported("suffix", "'suffix' (fill in the middle) is not supported; only an empty suffix or null")
    }
    if let bias = body["logit_bias"], bias != .null, bias.objectValue?.isEmpty != true {
        throw unsupported("logit_bias", "'logit_bias' is not supported; only an empty object or null")
    }
    let n = body["n"].flatMap { $0 == .null ? nil : $0 } ?? .number(1)
    if let bestOf = body["best_of"], bestOf != .null, bestOf != n {
        throw unsupported("best_of", "'best_of' is not supported other than equal to 'n' (every choice is returned)")
    }
    switch body["stream_options"] {
    case nil, .null: break
    case .object(let o):
        if let key = o.keys.sorted().first(where: { $0 != "include_usage" }), o[key] != .null {
            throw APIError(
                400, "'stream_options.\(key)' is not supported; only include_usage", param: "stream_options.\(key)",
                code: "unsupported_parameter")
        }
        if let usage = o["include_usage"], usage != .null, usage.boolValue == nil {
            throw APIError.invalid("stream_options.include_usage", "'include_usage' must be true or false")
        }
    default: throw APIError.invalid("stream_options", "'stream_options' must be an object")
    }
    if let p = body["parallel_tool_calls"], p != .null, p.boolValue == nil {
        throw APIError.invalid("parallel_tool_calls", "'parallel_tool_calls' must be true or false")
    }
    if let stream = body["stream"], stream != .null, stream.boolValue == nil {
        throw APIError.invalid("stream", "'stream' must be true or false")
    }
}

/// `tools` and `tool_choice` of a chat request: the reply is constrained to Sanad's tool envelope over the offered
/// functions (`ToolCalling`), so a call names an offered function with arguments valid for its schema.
public struct ToolRequest: Sendable {
    public var offers: [ToolCalling.Offer]
    /// `auto`: a call or a text answer; `required` (or one function named): a call.
    public var textAllowed: Bool
}

/// The body of a POST as a JSON object, or a 400 naming the problem.
public func decodeJSONObject(_ body: [UInt8], maximumBytes: Int) throws(APIError) -> [String: JSONValue] {
    let value: JSONValue
    do {
        value = try StrictJSON(maximumBytes: maximumBytes).parse(body)
    } catch {
        throw APIError(400, "the request body is not valid JSON: \(error)", code: "invalid_json")
    }
    guard let object = value.objectValue else {
        throw APIError(400, "the request body must be a JSON object, not \(value.kindName)", code: "invalid_json")
    }
    return object
}

/// `POST /v1/chat/completions`.
public func decodeChatRequest(_ body: [String: JSONValue], defaultMaxTokens: Int) throws(APIError) -> CompletionRequest
{
    try checkFields(body, allowed: chatFields)
    guard let list = body["messages"]?.arrayValue, !list.isEmpty else {
        throw APIError.invalid("messages", "'messages' must be a non-empty array")
    }
    var messages: [ChatMessage] = []
    for (i, item) in list.enumerated() {
        guard let m = item.objectValue, let roleName = m["role"]?.stringValue else {
            throw APIError.invalid("messages[\(i)]", "each message needs a 'role' and 'content'")
        }
        let role: ChatRole
        switch roleName {
        case "developer": role = .system
        default:
            guard let r = ChatRole(rawValue: roleName) else {
                throw APIError.invalid(
                    "messages[\(i)].role", "unknown role '\(roleName)'; use system, developer, user, assistant or tool")
            }
            role = r
        }
        messages.append(try toolTurn(m, role: role, param: "messages[\(i)]"))
    }
    var parameters = try decodeGenerationParameters(body, defaultMaxTokens: defaultMaxTokens)
    parameters.constraint = try decodeResponseFormat(body["response_format"])
    let tools = try decodeTools(body["tools"], choice: body["tool_choice"])
    let n = try choiceCount(body)
    let logprobs = try chatLogprobs(body)
    if let tools {
        guard parameters.constraint == nil else {
            throw APIError.invalid("response_format", "'response_format' cannot be combined with 'tools'")
        }
        guard logprobs == nil else {
            throw APIError(
                400, "'logprobs' cannot be combined with 'tools' (the tokens are those of the call's envelope)",
                param: "logprobs", code: "unsupported_value")
        }
        guard n == 1 else {
            throw APIError(400, "'n' above 1 cannot be combined with 'tools'", param: "n", code: "unsupported_value")
        }
        let schema = ToolCalling.envelopeSchema(offers: tools.offers, allowText: tools.textAllowed)
        do {
            parameters.constraint = try SchemaConstraint(schema: schema)
        } catch {
            throw APIError.invalid("tools", "a function's 'parameters' schema is not supported: \(error.description)")
        }
        messages.insert(.system(ToolCalling.instructions(offers: tools.offers, allowText: tools.textAllowed)), at: 0)
    }
    if parameters.constraint != nil { parameters.stopStrings = [] }
    if let schema = parameters.constraint as? SchemaConstraint, let shortest = schema.shortestDocument,
        parameters.maxTokens < shortest
    {
        throw APIError.invalid(
            "max_tokens",
            "'max_tokens' (\(parameters.maxTokens)) is below the \(shortest) tokens of the shortest JSON document "
                + "the \(tools == nil ? "response_format schema" : "tool call envelope") accepts (one byte per "
                + "token, what the constraint can promise to close in); use at least \(shortest)")
    }
    return CompletionRequest(
        prompts: [.chat(messages)], parameters: parameters, stream: body["stream"]?.boolValue ?? false,
        includeUsage: body["stream_options"]?["include_usage"]?.boolValue ?? false, tools: tools,
        choicesPerPrompt: n, logprobs: logprobs, receipt: try decodeReceipt(body["receipt"]))
}

/// `n`: 1…`maximumChoices` (the default 1).
func choiceCount(_ body: [String: JSONValue]) throws(APIError) -> Int {
    guard let n = try integer(body, "n", in: 1...maximumChoices) else { return 1 }
    return n
}

/// A chat's `logprobs` (true or false) and `top_logprobs` (0…20, only with `logprobs: true`), as the number of
/// alternatives per token; nil when off.
func chatLogprobs(_ body: [String: JSONValue]) throws(APIError) -> Int? {
    let top = try integer(body, "top_logprobs", in: 0...LogProbabilityRecorder.maximumTop)
    switch body["logprobs"] {
    case nil, .null, .bool(false):
        if top != nil { throw APIError.invalid("top_logprobs", "'top_logprobs' needs 'logprobs': true") }
        return nil
    case .bool(true): return top ?? 0
    default: throw APIError.invalid("logprobs", "'logprobs' must be true or false on chat completions")
    }
}

/// An integer field within `range`, nil when absent or null.
func integer(_ body: [String: JSONValue], _ key: String, in range: ClosedRange<Int>) throws(APIError) -> Int? {
    guard let v = try number(body, key, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
    guard v == v.rounded() else { throw APIError.invalid(key, "'\(key)' must be an integer") }
    return Int(v)
}

/// A message as the model sees it: an assistant's `tool_calls` become Sanad's envelope (`{"tool":…,"arguments":…}`),
/// a `tool` message becomes a user turn `Tool result: …`, as `ToolCalling` writes them.
func toolTurn(_ m: [String: JSONValue], role: ChatRole, param: String) throws(APIError) -> ChatMessage {
    let text = try messageText(m["content"], param: "\(param).content")
    if role == .tool { return .user("Tool result: \(text)") }
    guard role == .assistant, let calls = m["tool_calls"]?.arrayValue, !calls.isEmpty else {
        return ChatMessage(role: role, content: text)
    }
    var envelopes: [String] = []
    for (j, call) in calls.enumerated() {
        guard let name = call["function"]?["name"]?.stringValue else {
            throw APIError.invalid("\(param).tool_calls[\(j)]", "each tool call needs 'function.name'")
        }
        let argumentsText = call["function"]?["arguments"]?.stringValue ?? "{}"
        let arguments: JSONValue
        do {
            // StrictJSON's depth limit applies inside the string too: its nesting cannot exhaust the stack.
            arguments = try StrictJSON().parse(Array(argumentsText.utf8))
        } catch {
            throw APIError.invalid(
                "\(param).tool_calls[\(j)].function.arguments",
                "'arguments' must be a JSON object as a string: \(error)")
        }
        envelopes.append(JSONValue.object(["tool": .string(name), "arguments": arguments]).jsonString)
    }
    return .assistant(([text] + envelopes).filter { !$0.isEmpty }.joined(separator: "\n"))
}

/// `tools` (`[{"type":"function","function":{"name","description","parameters"}}]`) and `tool_choice` (`none`,
/// `auto` (the default), `required`, or `{"type":"function","function":{"name":…}}`); nil when there is nothing to
/// offer.
func decodeTools(_ tools: JSONValue?, choice: JSONValue?) throws(APIError) -> ToolRequest? {
    guard let list = tools?.arrayValue, !list.isEmpty else {
        if let choice, choice != .null, choice != .string("none"), choice != .string("auto") {
            throw APIError.invalid("tool_choice", "'tool_choice' needs 'tools'")
        }
        return nil
    }
    var offers: [ToolCalling.Offer] = []
    for (i, tool) in list.enumerated() {
        guard tool["type"]?.stringValue == "function", let f = tool["function"]?.objectValue,
            let name = f["name"]?.stringValue
        else {
            throw APIError.invalid("tools[\(i)]", "each tool must be {\"type\":\"function\",\"function\":{\"name\":…}}")
        }
        guard (1...64).contains(name.count),
            name.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-"
            })
        else {
            throw APIError.invalid("tools[\(i)].function.name", "'\(name)' must be 1–64 of a-z, A-Z, 0-9, _ and -")
        }
        guard !offers.contains(where: { $0.name == name }) else {
            throw APIError.invalid("tools[\(i)].function.name", "'\(name)' is offered twice")
        }
        let parameters = f["parameters"] ?? .object(["type": .string("object"), "properties": .object([:])])
        guard parameters.objectValue != nil else {
            throw APIError.invalid("tools[\(i)].function.parameters", "'parameters' must be a JSON Schema object")
        }
        offers.append(
            ToolCalling.Offer(name: name, description: f["description"]?.stringValue ?? "", arguments: parameters))
    }
    switch choice {
    case nil, .null, .string("auto"): return ToolRequest(offers: offers, textAllowed: true)
    case .string("none"): return nil
    case .string("required"): return ToolRequest(offers: offers, textAllowed: false)
    case .object(let o) where o["type"]?.stringValue == "function":
        guard let name = o["function"]?["name"]?.stringValue, let offer = offers.first(where: { $0.name == name })
        else {
            throw APIError.invalid("tool_choice", "'tool_choice' names a function that is not in 'tools'")
        }
        return ToolRequest(offers: [offer], textAllowed: false)
    default:
        throw APIError.invalid(
            "tool_choice",
            "'tool_choice' must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":…}}")
    }
}

/// `POST /v1/completions`.
public func decodeCompletionRequest(_ body: [String: JSONValue], defaultMaxTokens: Int) throws(APIError)
    -> CompletionRequest
{
    try checkFields(body, allowed: completionFields)
    let prompts: [String]
    switch body["prompt"] {
    case .string(let s): prompts = [s]
    case .array(let a) where !a.isEmpty && a.allSatisfy({ $0.stringValue != nil }):
        prompts = a.compactMap(\.stringValue)
    default:
        throw APIError.invalid(
            "prompt", "'prompt' must be a string or a non-empty array of strings (token-id prompts are not supported)")
    }
    let n = try choiceCount(body)
    guard prompts.count * n <= maximumChoices else {
        throw APIError.invalid(
            "prompt", "\(prompts.count) prompts × n = \(n) is \(prompts.count * n) choices; at most \(maximumChoices)")
    }
    let logprobs: Int?
    switch body["logprobs"] {
    case nil, .null, .bool(false): logprobs = nil
    default: logprobs = try integer(body, "logprobs", in: 0...LogProbabilityRecorder.maximumTop)
    }
    return CompletionRequest(
        prompts: prompts.map { .text($0) },
        parameters: try decodeGenerationParameters(body, defaultMaxTokens: defaultMaxTokens),
        stream: body["stream"]?.boolValue ?? false,
        includeUsage: body["stream_options"]?["include_usage"]?.boolValue ?? false, choicesPerPrompt: n,
        logprobs: logprobs, receipt: try decodeReceipt(body["receipt"]))
}

/// A message's text: a string, or an array of `{"type":"text","text":…}` parts.
func messageText(_ content: JSONValue?, param: String) throws(APIError) -> String {
    switch content {
    case .string(let s): return s
    case .null, nil: return ""
    case .array(let parts):
        var text = ""
        for part in parts {
            guard part["type"]?.stringValue == "text", let t = part["text"]?.stringValue else {
                throw APIError.invalid(param, "only text content parts are supported")
            }
            text += t
        }
        return text
    default: throw APIError.invalid(param, "'content' must be a string or an array of text parts")
    }
}

/// temperature, top_p, llama-server's top_k, min_p, repeat_penalty and repeat_last_n, presence_penalty,
/// frequency_penalty, max_tokens (or max_completion_tokens), stop and seed, checked against OpenAI's (and
/// llama-server's) ranges.
func decodeGenerationParameters(_ body: [String: JSONValue], defaultMaxTokens: Int) throws(APIError)
    -> GenerationParameters
{
    var sampling = SamplingParameters(seed: UInt64.random(in: 0...UInt64(UInt32.max)))
    if let t = try number(body, "temperature", in: 0...2) { sampling.temperature = Float(t) }
    if let p = try number(body, "top_p", in: 0...1) { sampling.topP = Float(p) }
    if let k = try integer(body, "top_k", in: 0...1_048_576) { sampling.topK = k }
    if let m = try number(body, "min_p", in: 0...1) { sampling.minP = Float(m) }
    if let r = try number(body, "repeat_penalty", in: 0...10) {
        guard r > 0 else { throw APIError.invalid("repeat_penalty", "'repeat_penalty' must be above 0 (1 = off)") }
        sampling.repetitionPenalty = Float(r)
    }
    if let w = try integer(body, "repeat_last_n", in: 0...1_048_576) { sampling.repetitionWindow = w }
    if let f = try number(body, "frequency_penalty", in: -2...2) { sampling.frequencyPenalty = Float(f) }
    if let p = try number(body, "presence_penalty", in: -2...2) { sampling.presencePenalty = Float(p) }
    if let s = try number(body, "seed", in: 0...9.0e15) {
        guard s == s.rounded() else { throw APIError.invalid("seed", "'seed' must be an integer") }
        sampling.seed = UInt64(s)
    }
    var maxTokens = defaultMaxTokens
    for key in ["max_tokens", "max_completion_tokens"] {
        if let m = try number(body, key, in: 1...1_048_576) {
            guard m == m.rounded() else { throw APIError.invalid(key, "'\(key)' must be an integer") }
            maxTokens = Int(m)
        }
    }
    var stops: [String] = []
    switch body["stop"] {
    case nil, .null: break
    case .string(let s): stops = [s]
    case .array(let a) where a.count <= 4 && a.allSatisfy({ !($0.stringValue ?? "").isEmpty }):
        stops = a.compactMap(\.stringValue)
    default: throw APIError.invalid("stop", "'stop' must be a string or an array of up to 4 non-empty strings")
    }
    return GenerationParameters(maxTokens: maxTokens, sampling: sampling, stopStrings: stops.filter { !$0.isEmpty })
}

/// A numeric field within `range`, nil when absent or null.
func number(_ body: [String: JSONValue], _ key: String, in range: ClosedRange<Double>) throws(APIError) -> Double? {
    switch body[key] {
    case nil, .null: return nil
    case .number(let v) where range.contains(v): return v
    default:
        throw APIError.invalid(key, "'\(key)' must be a number in \(range.lowerBound)…\(range.upperBound)")
    }
}

/// `response_format`: `text`, `json_object` (any JSON object) or `json_schema` (the schema's subset that
/// `SanadStructured` compiles), as a constraint of the sampling chain.
func decodeResponseFormat(_ format: JSONValue?) throws(APIError) -> SchemaConstraint? {
    guard let format, format != .null else { return nil }
    let schema: JSONValue
    switch format["type"]?.stringValue {
    case "text": return nil
    case "json_object": schema = .object(["type": .string("object")])
    case "json_schema":
        guard let s = format["json_schema"]?["schema"], s.objectValue != nil else {
            throw APIError.invalid("response_format", "'json_schema.schema' must be a JSON Schema object")
        }
        schema = s
    default:
        throw APIError.invalid("response_format", "'response_format.type' must be text, json_object or json_schema")
    }
    do {
        return try SchemaConstraint(schema: schema)
    } catch {
        throw APIError.invalid("response_format", "the JSON schema is not supported: \(error.description)")
    }
}

/// `POST /v1/embeddings`: the texts and whether vectors go back as base64 (little-endian float32).
public func decodeEmbeddingRequest(_ body: [String: JSONValue], maximumInputs: Int) throws(APIError)
    -> (texts: [String], base64: Bool)
{
    try checkFields(body, allowed: embeddingFields)
    let texts: [String]
    switch body["input"] {
    case .string(let s): texts = [s]
    case .array(let a) where !a.isEmpty && a.count <= maximumInputs && a.allSatisfy({ $0.stringValue != nil }):
        texts = a.compactMap(\.stringValue)
    default:
        throw APIError.invalid("input", "'input' must be a string or an array of 1…\(maximumInputs) strings")
    }
    switch body["encoding_format"]?.stringValue {
    case nil, "float": return (texts, false)
    case "base64": return (texts, true)
    default: throw APIError.invalid("encoding_format", "'encoding_format' must be float or base64")
    }
}
