import Foundation

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
/// `followUps(after:)` after every reply, `destination(for:)` when a deep link is followed.
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
}

extension FeaturePlugin {
    public func suggestions() async throws -> [ChatSuggestion] { [] }
    public func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply? { nil }
    public func followUps(after reply: ReplyContext) async throws -> [ChatFollowUp] { [] }
    public func destination(for link: DeepLink) async throws -> Destination? { nil }
}

/// Registry entries: ids mapped to factories. The CLI is the only place that fills them; configs refer to ids.
public struct BackendRegistry: Sendable {
    public let inference: [String: any InferenceBackend]
    public let embedding: [String: any EmbeddingBackend]

    public init(inference: [any InferenceBackend], embedding: [any EmbeddingBackend] = []) {
        var table: [String: any InferenceBackend] = [:]
        for b in inference { table[b.id] = b }
        self.inference = table
        var e: [String: any EmbeddingBackend] = [:]
        for b in embedding { e[b.id] = b }
        self.embedding = e
    }

    /// Inference backend ids, sorted.
    public var inferenceIDs: [String] { inference.keys.sorted() }
    public var embeddingIDs: [String] { embedding.keys.sorted() }

    public func backend(_ id: String) throws -> any InferenceBackend {
        guard let b = inference[id] else { throw SanadError.unknownBackend(id: id, known: inferenceIDs) }
        return b
    }

    /// The first available backend of `preference`, with the reasons the earlier ones were skipped.
    public func firstAvailable(_ preference: [String]) throws -> (backend: any InferenceBackend, skipped: [String]) {
        try firstAvailable(preference.map { HostConfiguration.BackendChoice(id: $0) })
    }

    /// The first backend of a config's preference list that is available with its options, with the reasons the
    /// earlier ones were skipped.
    public func firstAvailable(_ preference: [HostConfiguration.BackendChoice]) throws -> (
        backend: any InferenceBackend, skipped: [String]
    ) {
        var skipped: [String] = []
        for choice in preference {
            let id = choice.id
            let b = try backend(id)
            switch b.availability(options: choice.options) {
            case .available: return (b, skipped)
            case .unavailable(let reason): skipped.append("\(id): \(reason)")
            }
        }
        throw SanadError.noBackendAvailable(reasons: skipped)
    }
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
