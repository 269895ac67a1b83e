import Foundation
import SanadCore

/// One message of a chat as the user sees it (the role/content pairs a model's template takes are `ChatMessage`).
///
/// JSON: `{"id": "…", "content": "…", "isUser": true, "timestamp": "2026-11-22T09:30:00Z", "deepLink": {…},
/// "check": {"verified": false, "note": "⚠ …"}, "receipt": {…}}`; the timestamp is ISO-8601 in UTC (fractional
/// seconds written only when the time has them), `deepLink`, `check` and `receipt` are left out when there is none. Decoding then encoding gives the
/// same JSON, and encoding then decoding the same value.
public struct ChatEntry: Sendable, Codable, Equatable, Identifiable {
    public var id: String
    /// The text as the user reads it (a grounded reply's check is in `check`, not here).
    public var content: String
    /// True for what the user typed or tapped; false for the assistant, plugins and the host.
    public var isUser: Bool
    public var timestamp: Date
    public var deepLink: DeepLink?
    /// How a grounded reply's text was checked; nil for text there was nothing to check against.
    public var check: ReplyCheck?
    /// The signed receipt of the generation that wrote this reply (`sanad chat --receipts`; README.md "Receipts"),
    /// as its JSON object; nil for every other message.
    public var receipt: JSONValue?

    public init(
        id: String = UUID().uuidString, content: String, isUser: Bool, timestamp: Date, deepLink: DeepLink? = nil,
        check: ReplyCheck? = nil
    ) {
        self.id = id
        self.content = content
        self.isUser = isUser
        self.timestamp = timestamp
        self.deepLink = deepLink
        self.check = check
    }

    enum CodingKeys: String, CodingKey {
        case id, content, isUser, timestamp, deepLink, check, receipt
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        content = try c.decode(String.self, forKey: .content)
        isUser = try c.decode(Bool.self, forKey: .isUser)
        let text = try c.decode(String.self, forKey: .timestamp)
        guard let date = parseISO8601(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .timestamp, in: c,
                debugDescription: "'\(text)' is not an ISO-8601 date-time such as 2026-11-22T09:30:00Z")
        }
        timestamp = date
        deepLink = try c.decodeIfPresent(DeepLink.self, forKey: .deepLink)
        check = try c.decodeIfPresent(ReplyCheck.self, forKey: .check)
        receipt = try c.decodeIfPresent(JSONValue.self, forKey: .receipt)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(content, forKey: .content)
        try c.encode(isUser, forKey: .isUser)
        try c.encode(formatISO8601(timestamp), forKey: .timestamp)
        try c.encodeIfPresent(deepLink, forKey: .deepLink)
        try c.encodeIfPresent(check, forKey: .check)
        try c.encodeIfPresent(receipt, forKey: .receipt)
    }

    /// A chat history as JSON: an array of messages, keys sorted, indented.
    public static func encodeHistory(_ entries: [ChatEntry]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(entries)
    }

    /// Reads a history written by `encodeHistory`; `file` names the source in the error.
    public static func decodeHistory(_ data: Data, file: String) throws -> [ChatEntry] {
        do {
            return try JSONDecoder().decode([ChatEntry].self, from: data)
        } catch let error as DecodingError {
            throw ChatError.historyFile(path: file, problem: describe(error))
        }
    }
}

/// The outcome of a grounded reply's check, kept with the message as metadata: whether the model's text was kept
/// (`verified`) or replaced by the plugin's template, and the note that says so (`✓ …` / `⚠ …`, in the chat's
/// language), which front ends show small under the message. Only when drafts are asked for
/// (`ChatConfiguration.showDrafts`) does a replaced reply keep the rejected `draft`, and its note the reasons.
///
/// JSON: `{"verified": false, "note": "⚠ …"}`, with `"draft": "…"` only when there is one.
public struct ReplyCheck: Sendable, Codable, Equatable {
    public var verified: Bool
    public var note: String
    /// The model's rejected wording (debugging only; nil unless drafts were asked for).
    public var draft: String?

    public init(verified: Bool, note: String, draft: String? = nil) {
        self.verified = verified
        self.note = note
        self.draft = draft
    }
}

/// `2026-11-22T09:30:00Z`, with `.123` milliseconds only when the date has a fraction of a second.
public func formatISO8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(secondsFromGMT: 0)
    let seconds = date.timeIntervalSince1970
    formatter.formatOptions =
        seconds.rounded(.down) == seconds ? [.withInternetDateTime] : [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: date)
}

/// Parses an ISO-8601 date-time with a zone (`Z` or `+03:00`), with or without fractional seconds.
public func parseISO8601(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    if let d = formatter.date(from: text) { return d }
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// A tappable suggestion shown under the greeting. Tapping it sends `text` as the user's message and asks the
/// plugin `pluginID` for the grounded reply (`FeaturePlugin.reply(to:)`).
public struct ChatSuggestion: Sendable, Codable, Equatable, Identifiable {
    public var id: String
    /// What the chip shows.
    public var text: String
    /// The plugin that offered it.
    public var pluginID: String
    /// Whatever the plugin needs to answer it (for example the alert id).
    public var payload: JSONValue

    public init(id: String, text: String, pluginID: String, payload: JSONValue = .null) {
        self.id = id
        self.text = text
        self.pluginID = pluginID
        self.payload = payload
    }
}

/// What can go wrong in a chat session, worded for the user with what to do next.
public enum ChatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A deep link URL that does not parse.
    case invalidDeepLink(url: String, problem: String)
    /// No plugin could open the link, or the one that handles it refused (unknown alert, …).
    case navigationFailed(link: DeepLink, reason: String)
    /// Empty or whitespace-only text was submitted.
    case emptyMessage
    /// A reply is still being generated.
    case busy
    /// Input is disabled (the engine did not load, or the chat is dismissed); `reason` says which and what to do.
    case inputDisabled(reason: String)
    /// No suggestion with this number/id.
    case unknownSuggestion(String, count: Int)
    /// A history file could not be read or written.
    case historyFile(path: String, problem: String)

    public var description: String {
        switch self {
        case .invalidDeepLink(let url, let problem):
            return "invalid deep link '\(url)': \(problem)"
        case .navigationFailed(let link, let reason):
            return "cannot open the '\(link.serviceType)' link to '\(link.alertId)': \(reason)"
        case .emptyMessage:
            return "the message is empty; type some text"
        case .busy:
            return "a reply is still being written; wait for it to finish"
        case .inputDisabled(let reason):
            return "input is disabled: \(reason)"
        case .unknownSuggestion(let s, let count):
            return count == 0
                ? "there is no suggestion '\(s)': this chat has no suggestions"
                : "there is no suggestion '\(s)'; choose 1…\(count)"
        case .historyFile(let path, let problem):
            return "\(path): \(problem)"
        }
    }
}

/// A decoding error as one line naming the key path.
func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
        let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
        return p.hasPrefix(".") ? String(p.dropFirst()) : p
    }
    switch error {
    case .keyNotFound(let key, let context):
        let p = path(context)
        return "\(p.isEmpty ? "" : p + ": ")missing key '\(key.stringValue)'"
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        return "\(path(context)): \(context.debugDescription)"
    case .dataCorrupted(let context):
        let p = path(context)
        let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
        return "\(p.isEmpty ? "" : p + ": ")\(detail ?? context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}
