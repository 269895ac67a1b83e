import SanadCore

/// A conversation a plugin holds with the person across messages (a form being filled in): while it is open, the
/// chat's typed text goes to that plugin (`FeaturePlugin.continueTask`) instead of the engine, and its reply is
/// shown as written (no model, no check note).
public struct ChatTask: Sendable, Equatable {
    /// The plugin holding it.
    public var pluginID: String
    /// The plugin's own state (for the forms plugin, the session id).
    public var state: JSONValue

    public init(pluginID: String, state: JSONValue) {
        self.pluginID = pluginID
        self.state = state
    }
}

/// A plugin's reply within a task: what to say, and the task still open after it.
public struct TaskReply: Sendable, Equatable {
    /// The message shown, as written.
    public var content: String
    /// The task open after this reply; nil when it ended or was paused (typed text goes to the chat again).
    public var task: ChatTask?

    public init(content: String, task: ChatTask?) {
        self.content = content
        self.task = task
    }
}
