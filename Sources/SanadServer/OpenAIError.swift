import SanadCore

/// OpenAI's error body: `{"error":{"message","type","param","code"}}`.
public func openAIErrorJSON(_ message: String, type: String, param: String? = nil, code: String? = nil) -> String {
    JSONValue.object([
        "error": .object([
            "message": .string(message), "type": .string(type), "param": param.map(JSONValue.string) ?? .null,
            "code": code.map(JSONValue.string) ?? .null,
        ])
    ]).jsonString
}

/// A request the API refuses: its status and OpenAI error fields.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var message: String
    public var type: String
    public var param: String?
    public var code: String?

    public init(
        _ status: Int, _ message: String, type: String = "invalid_request_error", param: String? = nil,
        code: String? = nil
    ) {
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
    }

    /// A bad value in the request body, naming the field.
    public static func invalid(_ param: String, _ message: String) -> APIError {
        APIError(400, message, param: param, code: "invalid_value")
    }

    public var response: HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if status == 503 { headers.append(("Retry-After", "1")) }
        if status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        return .json(status, openAIErrorJSON(message, type: type, param: param, code: code), headers: headers)
    }
}
