import Foundation
import SanadCore
import SanadReceipts

/// What a request's `receipt` field asks for: `true`, `false`, or `{"include_text": true|false}` (a receipt that
/// also states the prompt and output text and token ids, which a replay needs).
public struct ReceiptRequest: Sendable, Equatable {
    public var wanted: Bool
    /// nil: as the server's `--receipt-include-text` says.
    public var includeText: Bool?

    public init(wanted: Bool, includeText: Bool? = nil) {
        self.wanted = wanted
        self.includeText = includeText
    }
}

/// A request's `receipt` (nil when absent or null).
func decodeReceipt(_ value: JSONValue?) throws(APIError) -> ReceiptRequest? {
    switch value {
    case nil, .null: return nil
    case .bool(let wanted): return ReceiptRequest(wanted: wanted)
    case .object(let o):
        if let key = o.keys.sorted().first(where: { $0 != "include_text" }) {
            throw APIError(
                400, "'receipt.\(key)' is not supported; only include_text", param: "receipt.\(key)",
                code: "unsupported_parameter")
        }
        switch o["include_text"] {
        case nil, .null: return ReceiptRequest(wanted: true)
        case .bool(let b): return ReceiptRequest(wanted: true, includeText: b)
        default: throw APIError.invalid("receipt.include_text", "'include_text' must be true or false")
        }
    default:
        throw APIError.invalid("receipt", "'receipt' must be true, false or {\"include_text\": true|false}")
    }
}

/// The server's receipts (`sanad serve --receipts`, or a request's `receipt`): each answer's generation signed by
/// the device key, the model hashed once on the first receipt (`issuer`).
public final class ServerReceipts: @unchecked Sendable {  // `made` behind `lock`
    /// Whether every answer carries a receipt unless its request says `"receipt": false`.
    public let byDefault: Bool
    /// Whether receipts state the prompt and output text (a request's `include_text` decides for itself).
    public let includeText: Bool
    private let make: @Sendable () throws -> ReceiptIssuer
    private let lock = NSLock()
    private var made: ReceiptIssuer?

    public init(byDefault: Bool, includeText: Bool, issuer: @escaping @Sendable () throws -> ReceiptIssuer) {
        self.byDefault = byDefault
        self.includeText = includeText
        self.make = issuer
    }

    /// The issuer, made on first use (hashing the model file takes a while: it is done once).
    public func issuer() throws -> ReceiptIssuer {
        try lock.withLock {
            if let made { return made }
            let issuer = try make()
            made = issuer
            return issuer
        }
    }

    /// Whether `request` gets a receipt, and with text; nil: none. A receipt covers one generation: a request for
    /// several choices that would get one is refused.
    func wanted(by request: CompletionRequest) throws(APIError) -> Bool? {
        guard request.receipt?.wanted ?? byDefault else { return nil }
        guard request.prompts.count * request.choicesPerPrompt == 1 else {
            throw APIError(
                400,
                "a receipt covers one generation, and this request asks for \(request.prompts.count * request.choicesPerPrompt) "
                    + "choices: ask for n 1 and one prompt" + (byDefault ? ", or send \"receipt\": false" : ""),
                param: "receipt", code: "unsupported_value")
        }
        return request.receipt?.includeText ?? includeText
    }
}
