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
        messages.append(
            ChatMessage(role: role, content: try messageText(m["content"], param: "messages[\(i)].content")))
    }
    if let tools = body["tools"]?.arrayValue, !tools.isEmpty {
        throw APIError.invalid("tools", "tool calls are not served yet; send the request without 'tools'")
    }
    var parameters = try decodeGenerationParameters(body, defaultMaxTokens: defaultMaxTokens)
    parameters.constraint = try decodeResponseFormat(body["response_format"])
    if parameters.constraint != nil { parameters.stopStrings = [] }
    return CompletionRequest(
        prompt: .chat(messages), parameters: parameters, stream: body["stream"]?.boolValue ?? false,
        includeUsage: body["stream_options"]?["include_usage"]?.boolValue ?? false)
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
