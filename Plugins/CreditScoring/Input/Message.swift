/// One message of a person's history, as the input formats give it. `text` stays on the device: only features
/// computed from it, and a hash over all messages, leave the analysis.
public struct Message: Sendable, Equatable {
    /// The input's id, or `L<line>` for line formats.
    public var id: String
    /// Seconds since 1970-01-01T00:00:00Z (times without a zone are read as UTC).
    public var date: Int64
    public var sender: String
    public var isFromMe: Bool
    /// The conversation; for line formats without one, the other person of a one-to-one export.
    public var chat: String
    public var text: String
    /// The line of the input where the message starts (for messages in reports).
    public var line: Int

    public init(id: String, date: Int64, sender: String, isFromMe: Bool, chat: String, text: String, line: Int) {
        self.id = id
        self.date = date
        self.sender = sender
        self.isFromMe = isFromMe
        self.chat = chat
        self.text = text
        self.line = line
    }

    /// The contact the message belongs to: its chat, else the other person.
    public var contact: String { chat.isEmpty ? sender : chat }
}
