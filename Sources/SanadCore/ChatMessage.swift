/// Who said a chat message.
public enum ChatRole: String, Sendable, Codable, Equatable, CaseIterable {
    case system, user, assistant, tool
}

/// A role/content pair as chat templates take them.
public struct ChatMessage: Sendable, Codable, Equatable {
    public var role: ChatRole
    public var content: String

    public init(role: ChatRole, content: String) {
        self.role = role
        self.content = content
    }

    public static func system(_ text: String) -> ChatMessage { ChatMessage(role: .system, content: text) }
    public static func user(_ text: String) -> ChatMessage { ChatMessage(role: .user, content: text) }
    public static func assistant(_ text: String) -> ChatMessage { ChatMessage(role: .assistant, content: text) }
}
