import Foundation
import SanadCore
import SanadStructured

/// What a chat or text completion request asks for, decoded and checked.
public struct CompletionRequest: Sendable {
    public enum Prompt: Sendable, Equatable {
        case chat([ChatMessage])
        case text(String)
    }

    public var prompt: Prompt
    public var parameters: GenerationParameters
    public var stream: Bool
    /// `stream_options.include_usage`: a last chunk with the token counts.
    public var includeUsage: Bool
    /// The functions the client offers and whether a call is required (nil: no tools, or `tool_choice: "none"`).
    public var tools: ToolRequest? = nil
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
    if let tools {
        guard parameters.constraint == nil else {
            throw APIError.invalid("response_format", "'response_format' cannot be combined with 'tools'")
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
        prompt: .chat(messages), parameters: parameters, stream: body["stream"]?.boolValue ?? false,
        includeUsage: body["stream_options"]?["include_usage"]?.boolValue ?? false, tools: tools)
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
    let prompt: String
    switch body["prompt"] {
    case .string(let s): prompt = s
    case .array(let a) where a.count == 1 && a[0].stringValue != nil: prompt = a[0].stringValue ?? ""
    default: throw APIError.invalid("prompt", "'prompt' must be a string (or an array of one string)")
    }
    return CompletionRequest(
        prompt: .text(prompt), parameters: try decodeGenerationParameters(body, defaultMaxTokens: defaultMaxTokens),
        stream: body["stream"]?.boolValue ?? false,
        includeUsage: body["stream_options"]?["include_usage"]?.boolValue ?? false)
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

/// temperature, top_p, max_tokens (or max_completion_tokens), stop, seed and n, checked against OpenAI's ranges.
func decodeGenerationParameters(_ body: [String: JSONValue], defaultMaxTokens: Int) throws(APIError)
    -> GenerationParameters
{
    var sampling = SamplingParameters(seed: UInt64.random(in: 0...UInt64(UInt32.max)))
    if let t = try number(body, "temperature", in: 0...2) { sampling.temperature = Float(t) }
    if let p = try number(body, "top_p", in: 0...1) { sampling.topP = Float(p) }
    if let s = try number(body, "seed", in: 0...9.0e15) {
        guard s == s.rounded() else { throw APIError.invalid("seed", "'seed' must be an integer") }
        sampling.seed = UInt64(s)
    }
    if let n = try number(body, "n", in: 1...1), n != 1 { throw APIError.invalid("n", "only n = 1 is supported") }
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
