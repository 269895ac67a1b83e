/// Every text the chat layer itself shows the user: the greeting, the system prompt for typed text, error
/// messages, and the grounding notes. The defaults are neutral English; a product gives its own (the Absher app's
/// Arabic wording is `AbsherSettings.wording` in `Plugins/AbsherData`). Plugins word their own messages.
public struct ChatWording: Sendable {
    /// The first message of every chat.
    public var greeting: String
    /// The system prompt for typed text (a plugin's grounded reply brings its own).
    public var systemPrompt: String
    /// A plugin's suggestions could not be fetched: (plugin id, error).
    public var suggestionsFailed: @Sendable (_ plugin: String, _ error: String) -> String
    /// The engine failed to load: (error).
    public var engineFailed: @Sendable (_ error: String) -> String
    /// The prompt of a reply could not be prepared: (error).
    public var replyPreparationFailed: @Sendable (_ error: String) -> String
    /// A reply was asked for while the engine is not loaded.
    public var engineNotReady: String
    /// Generation failed midway: (error).
    public var replyFailed: @Sendable (_ error: String) -> String
    /// A plugin's follow-up messages could not be made: (plugin id, error).
    public var followUpsFailed: @Sendable (_ plugin: String, _ error: String) -> String
    /// A deep link could not be opened: (error).
    public var linkFailed: @Sendable (_ error: String) -> String
    /// The note under a generated reply that passed the grounding check: (the facts it states).
    public var verifiedNote: @Sendable (_ facts: [String]) -> String
    /// The note under a template reply that replaced a generated one: (why the generated one failed).
    public var rejectedNote: @Sendable (_ reasons: [String]) -> String
    /// A grounding failure reason: the text is empty.
    public var emptyText: String
    /// A grounding failure reason: (the fact's name) is not stated.
    public var missingFact: @Sendable (_ fact: String) -> String
    /// A grounding failure reason: (numbers that are not in the data).
    public var foreignNumbers: @Sendable (_ numbers: [String]) -> String
    /// A grounding failure reason: too few Arabic letters (percent that are).
    public var notArabic: @Sendable (_ percent: Int) -> String
    /// The reply to a typed message no plugin answers: (the plugins' `capabilities`). Nil lets the engine answer
    /// such a message freely (a general-purpose chat); a product whose users need facts sets it, so that text the
    /// host cannot check is never given as an answer.
    public var uncoveredQuestion: (@Sendable (_ capabilities: [String]) -> String)?
    /// A reply took longer than the configured limit and was stopped: (the limit in seconds).
    public var replyTimedOut: @Sendable (_ seconds: Int) -> String
    /// The engine was unloaded because the device is short of memory: (the pressure, as measured).
    public var engineUnloaded: @Sendable (_ pressure: String) -> String

    public init(
        greeting: String = "Hello. How can I help you today?",
        systemPrompt: String = "You are a helpful assistant. Answer briefly and politely.",
        suggestionsFailed: @escaping @Sendable (String, String) -> String = {
            "Could not get the suggestions of \($0): \($1)"
        },
        engineFailed: @escaping @Sendable (String) -> String = {
            "The engine could not be started, so replies are off; try again. (\($0))"
        },
        replyPreparationFailed: @escaping @Sendable (String) -> String = { "Could not prepare the reply: \($0)" },
        engineNotReady: String = "The engine is not ready.",
        replyFailed: @escaping @Sendable (String) -> String = { "Could not finish the reply: \($0)" },
        followUpsFailed: @escaping @Sendable (String, String) -> String = {
            "Could not add the messages of \($0): \($1)"
        },
        linkFailed: @escaping @Sendable (String) -> String = { "Could not open the link: \($0)" },
        verifiedNote: @escaping @Sendable ([String]) -> String = {
            "✓ Generated text, checked to state: \($0.joined(separator: ", "))."
        },
        rejectedNote: @escaping @Sendable ([String]) -> String = {
            "⚠ The generated text failed the check (\($0.joined(separator: ", "))), so this is the template."
        },
        emptyText: String = "the text is empty",
        missingFact: @escaping @Sendable (String) -> String = { "it does not state \($0)" },
        foreignNumbers: @escaping @Sendable ([String]) -> String = {
            "it states numbers that are not in the data: \($0.joined(separator: ", "))"
        },
        notArabic: @escaping @Sendable (Int) -> String = { "it is not in Arabic (\($0)% of the letters are)" },
        uncoveredQuestion: (@Sendable ([String]) -> String)? = nil,
        replyTimedOut: @escaping @Sendable (Int) -> String = {
            "The reply took longer than \($0) s, so it was stopped."
        },
        engineUnloaded: @escaping @Sendable (String) -> String = {
            "The device is short of memory (\($0)), so the model was unloaded; it loads again with your next message."
        }
    ) {
        self.greeting = greeting
        self.systemPrompt = systemPrompt
        self.suggestionsFailed = suggestionsFailed
        self.engineFailed = engineFailed
        self.replyPreparationFailed = replyPreparationFailed
        self.engineNotReady = engineNotReady
        self.replyFailed = replyFailed
        self.followUpsFailed = followUpsFailed
        self.linkFailed = linkFailed
        self.verifiedNote = verifiedNote
        self.rejectedNote = rejectedNote
        self.emptyText = emptyText
        self.missingFact = missingFact
        self.foreignNumbers = foreignNumbers
        self.notArabic = notArabic
        self.uncoveredQuestion = uncoveredQuestion
        self.replyTimedOut = replyTimedOut
        self.engineUnloaded = engineUnloaded
    }
}

/// The product a host presents (the Absher assistant, say): the chat's wording — greeting, system prompt and every
/// message of its own — the deep-link format of its app, and the web page `sanad serve` shows at `/`. One value,
/// chosen where the program is wired (`Wiring.swift`), and read by the chat, the server's web chat and the tools.
public struct ChatProduct: Sendable {
    /// A short id (`absher`).
    public var id: String
    public var wording: ChatWording
    public var linkFormat: DeepLinkFormat
    /// The web chat's page (HTML with its CSS and JavaScript), or nil: the server then serves no web chat.
    public var webPage: String?

    public init(id: String, wording: ChatWording, linkFormat: DeepLinkFormat, webPage: String? = nil) {
        self.id = id
        self.wording = wording
        self.linkFormat = linkFormat
        self.webPage = webPage
    }
}
