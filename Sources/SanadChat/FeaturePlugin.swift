import Foundation
import SanadCore

/// What the host gives a plugin: its options from the config, where to keep data, a clock, and the engines.
public struct PluginContext: Sendable {
    /// The plugin's `options` object from the host config.
    public var options: [String: JSONValue]
    /// A folder the plugin may write to (created by the host).
    public var dataDirectory: URL
    /// The config file the options came from (for error messages and relative paths).
    public var configFile: URL?
    /// Now, injectable for tests.
    public var now: @Sendable () -> Date

    public init(
        options: [String: JSONValue] = [:], dataDirectory: URL, configFile: URL? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.options = options
        self.dataDirectory = dataDirectory
        self.configFile = configFile
        self.now = now
    }
}

/// A feature hosted in the chat: it offers tools and reacts to chat events.
///
/// The chat hooks (see `ChatSession`) all have default implementations that do nothing, so a plugin implements only
/// the ones it needs: `suggestions()` when the chat opens, `reply(to:)` when one of its suggestions is tapped,
/// `followUps(after:)` after every reply, `destination(for:)` when a deep link is followed, `answer(to:)` when the user
/// types a message (the surest plugin's grounded answer is used; see `ChatSession`).
public protocol FeaturePlugin: AnyObject, Sendable {
    /// The id configs use (`proactive-alerts`).
    var id: String { get }
    /// The actions it offers the host and models.
    var tools: [any Tool] { get }

    /// Chips to show under the greeting when the chat opens, in order.
    func suggestions() async throws -> [ChatSuggestion]
    /// The grounded request for a tapped suggestion this plugin offered; nil when it is not one of its own.
    func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply?
    /// Messages to add after a reply (for example reminders related to it), in order.
    func followUps(after reply: ReplyContext) async throws -> [ChatFollowUp]
    /// The screen a deep link opens; nil when the link's `serviceType` is not this plugin's. Throws
    /// `ChatError.navigationFailed` when it is this plugin's but cannot be opened (unknown alert, …).
    func destination(for link: DeepLink) async throws -> Destination?
    /// A grounded answer to a typed message this plugin knows about, from its own data; nil when it does not.
    func answer(to question: TypedQuestion) async throws -> TypedAnswer?
    /// What the plugin can help with, one short phrase each in the chat's language, for the answer to a typed
    /// message no plugin covers.
    var capabilities: [String] { get }

    // The same in a language (`ChatLanguage`): a plugin that speaks several implements these; by default each
    // gives the one-language answer above. `answer(to:)` reads `TypedQuestion.language`, `followUps(after:)`
    // `ReplyContext.language`.
    /// Chips in `language` (the chat's, `--lang`).
    func suggestions(in language: ChatLanguage) async throws -> [ChatSuggestion]
    /// Chips in `language` while `openTask` (of any plugin) is open in this chat, so a plugin leaves out a chip that
    /// would resume the task already open. Default: `suggestions(in:)`.
    func suggestions(in language: ChatLanguage, openTask: ChatTask?) async throws -> [ChatSuggestion]
    /// The grounded request for a tapped suggestion, in `language`.
    func reply(to suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> GroundedReply?
    /// The screen a deep link opens, in `language`.
    func destination(for link: DeepLink, in language: ChatLanguage) async throws -> Destination?
    /// `capabilities` in `language`.
    func capabilities(in language: ChatLanguage) -> [String]

    // Tasks (`ChatTask`): a conversation the plugin holds across messages.
    /// When `suggestion` begins or resumes one of this plugin's tasks: its first message and the open task; nil when
    /// it is not such a chip (the chat then asks `reply(to:in:)`).
    func beginTask(for suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> TaskReply?
    /// Typed `text` while this plugin's `task` is open: the reply and the task open after it; nil when the plugin no
    /// longer holds it (the chat closes it and answers the text as usual).
    func continueTask(_ task: ChatTask, with text: String, in language: ChatLanguage) async throws -> TaskReply?
    /// The plugin's place in the web app (`WebPlace`: its page and calls under a path); nil when it has none.
    var webPlace: (any WebPlace)? { get }
}

extension FeaturePlugin {
    public func suggestions() async throws -> [ChatSuggestion] { [] }
    public func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply? { nil }
    public func followUps(after reply: ReplyContext) async throws -> [ChatFollowUp] { [] }
    public func destination(for link: DeepLink) async throws -> Destination? { nil }
    public func answer(to question: TypedQuestion) async throws -> TypedAnswer? { nil }
    public var capabilities: [String] { [] }
    public func suggestions(in language: ChatLanguage) async throws -> [ChatSuggestion] { try await suggestions() }
    public func suggestions(in language: ChatLanguage, openTask: ChatTask?) async throws -> [ChatSuggestion] {
        try await suggestions(in: language)
    }
    public func reply(to suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> GroundedReply? {
        try await reply(to: suggestion)
    }
    public func destination(for link: DeepLink, in language: ChatLanguage) async throws -> Destination? {
        try await destination(for: link)
    }
    public func capabilities(in language: ChatLanguage) -> [String] { capabilities }
    public func beginTask(for suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> TaskReply? { nil }
    public func continueTask(_ task: ChatTask, with text: String, in language: ChatLanguage) async throws
        -> TaskReply?
    { nil }
    public var webPlace: (any WebPlace)? { nil }
}

/// Plugin factories by id.
public struct PluginRegistry: Sendable {
    public typealias Factory = @Sendable (PluginContext) throws -> any FeaturePlugin
    public let factories: [String: Factory]

    public init(_ factories: [String: Factory]) {
        self.factories = factories
    }

    public var ids: [String] { factories.keys.sorted() }

    public func make(_ id: String, context: PluginContext) throws -> any FeaturePlugin {
        guard let f = factories[id] else { throw SanadError.unknownPlugin(id: id, known: ids) }
        return try f(context)
    }
}
