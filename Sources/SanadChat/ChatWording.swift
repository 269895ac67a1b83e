/// Every text the chat layer itself shows the user: the greeting, the system prompt for typed text, error
/// messages, and the grounding notes. The defaults are neutral English; a product gives its own (its
/// `ChatProduct`, chosen in the program's wiring). Plugins word their own messages.
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
    /// The note under a template reply that replaced a generated one, when drafts are shown: (why the generated
    /// one failed).
    public var rejectedNote: @Sendable (_ reasons: [String]) -> String
    /// The note under a template reply that replaced a generated one (the reasons quote the draft, so they are left
    /// out unless drafts are shown).
    public var templateNote: String
    /// The note under a template reply the tier chose over the model's wording (`GroundedPhrasing.template`).
    public var templateChosenNote: String
    /// A grounding failure reason: the text is empty.
    public var emptyText: String
    /// A grounding failure reason: (the fact's name) is not stated.
    public var missingFact: @Sendable (_ fact: String) -> String
    /// A grounding failure reason: (numbers that are not in the data).
    public var foreignNumbers: @Sendable (_ numbers: [String]) -> String
    /// A grounding failure reason: too few Arabic letters (percent that are).
    public var notArabic: @Sendable (_ percent: Int) -> String
    /// A grounding failure reason: an English reply with too many Arabic letters (percent that are).
    public var notEnglish: @Sendable (_ arabicPercent: Int) -> String
    /// A grounding failure reason: (words the text adds that neither the data nor the template use).
    public var unsupportedWords: @Sendable (_ words: [String]) -> String
    /// Words a rewording may add without adding a claim (function words, courtesies) in this wording's language;
    /// every other word of a generated text must come from the prompt or the template (`GroundingCheck`).
    public var commonWords: [String]
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
        templateNote: String = "⚠ The generated text failed the check, so this is the template.",
        templateChosenNote: String =
            "✓ The template's sentence, from the data (this device words such replies with templates).",
        emptyText: String = "the text is empty",
        missingFact: @escaping @Sendable (String) -> String = { "it does not state \($0)" },
        foreignNumbers: @escaping @Sendable ([String]) -> String = {
            "it states numbers that are not in the data: \($0.joined(separator: ", "))"
        },
        notArabic: @escaping @Sendable (Int) -> String = { "it is not in Arabic (\($0)% of the letters are)" },
        notEnglish: @escaping @Sendable (Int) -> String = {
            "it is not in English (\($0)% of the letters are Arabic)"
        },
        unsupportedWords: @escaping @Sendable ([String]) -> String = {
            "it says things the data does not: \($0.joined(separator: ", "))"
        },
        commonWords: [String] = ChatWording.englishFunctionWords,
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
        self.templateNote = templateNote
        self.templateChosenNote = templateChosenNote
        self.emptyText = emptyText
        self.missingFact = missingFact
        self.foreignNumbers = foreignNumbers
        self.notArabic = notArabic
        self.notEnglish = notEnglish
        self.unsupportedWords = unsupportedWords
        self.commonWords = commonWords
        self.uncoveredQuestion = uncoveredQuestion
        self.replyTimedOut = replyTimedOut
        self.engineUnloaded = engineUnloaded
    }
}

extension ChatWording {
    /// English function words and courtesies: they carry no fact of their own.
    public static let englishFunctionWords = """
        a an the is are was were be been being it its this that these those to of in on at for with and or but as by \
        from into your you yours we our us i me my he she they them their his her please now here there then can \
        will would may should must has have had do does did not no so also just very than about up out all any each \
        which who what when where how if thank thanks kindly sure ok okay
        """.split(separator: " ").map(String.init)
}

/// The product a host presents (an e-services assistant, say): the chat's wording — greeting, system prompt and every
/// message of its own — the deep-link format of its app, and the web page `sanad serve` shows at `/`. One value,
/// chosen where the program is wired (`Wiring.swift`), and read by the chat, the server's web chat and the tools.
public struct ChatProduct: Sendable {
    /// A short id, for notes and logs.
    public var id: String
    /// The wording in `language`.
    public var wording: ChatWording
    public var linkFormat: DeepLinkFormat
    /// The web chat's page (HTML with its CSS and JavaScript), or nil: the server then serves no web chat.
    public var webPage: String?
    /// The web app's login page (HTML), shown instead of a page asked without the API key when `sanad serve` needs
    /// one; nil: the server's plain page.
    public var loginPage: String?
    /// The labels `sanad chat` prints in a terminal, in `language`.
    public var terminal: TerminalWording
    /// The product's own language (the default of `--lang`).
    public var language: ChatLanguage
    /// The wording and labels in its other languages.
    public var translations: [ChatLanguage: (wording: ChatWording, terminal: TerminalWording)]

    public init(
        id: String, wording: ChatWording, linkFormat: DeepLinkFormat, webPage: String? = nil,
        loginPage: String? = nil, terminal: TerminalWording = .english, language: ChatLanguage = .english,
        translations: [ChatLanguage: (wording: ChatWording, terminal: TerminalWording)] = [:]
    ) {
        self.id = id
        self.wording = wording
        self.linkFormat = linkFormat
        self.webPage = webPage
        self.loginPage = loginPage
        self.terminal = terminal
        self.language = language
        self.translations = translations
    }

    /// The languages it speaks, its own first.
    public var languages: [ChatLanguage] {
        [language] + ChatLanguage.allCases.filter { $0 != language && translations[$0] != nil }
    }

    /// The wording in `language` (its own where it has no translation).
    public func wording(for language: ChatLanguage) -> ChatWording {
        language == self.language ? wording : translations[language]?.wording ?? wording
    }

    /// The terminal labels in `language` (its own where it has no translation).
    public func terminal(for language: ChatLanguage) -> TerminalWording {
        language == self.language ? terminal : translations[language]?.terminal ?? terminal
    }

    /// A chat configuration whose own language is `language` (default: the product's), with the wording of every
    /// language it speaks, so each reply is worded in its message's language.
    public func configuration(language: ChatLanguage? = nil) -> ChatConfiguration {
        let chosen = language ?? self.language
        var configuration = ChatConfiguration(wording: wording(for: chosen), linkFormat: linkFormat)
        configuration.language = chosen
        for other in languages where other != chosen { configuration.wordings[other] = wording(for: other) }
        return configuration
    }
}

/// The labels of a chat in a terminal (`sanad chat`): who speaks, the suggestions and links, and the short notes
/// between messages. Part of the product (`ChatProduct.terminal`); the default is plain English.
public struct TerminalWording: Sendable {
    /// Before the person's messages (`You`).
    public var user: String
    /// Before the assistant's messages (`Sanad`).
    public var assistant: String
    /// While a reply streams (`Sanad (writing)`).
    public var writing: String
    /// Before a grounded reply's unchecked draft, shown only with `--show-drafts` (`Sanad (model draft)`).
    public var draft: String
    /// The heading of the suggestions (`Suggestions:`).
    public var suggestions: String
    /// Link number N as shown beside a message (`link N`).
    public var link: @Sendable (Int) -> String
    public var loading: String
    public var ready: String
    public var stopped: String
    public var backToChat: String
    public var pageShown: String
    /// No suggestion now, or none with number N of `count`.
    public var noSuggestions: String
    public var noSuchSuggestion: @Sendable (_ number: Int, _ count: Int) -> String
    /// The history was saved to or loaded from FILE with N messages.
    public var saved: @Sendable (_ file: String, _ count: Int) -> String
    public var loaded: @Sendable (_ file: String, _ count: Int) -> String
    /// Tools on (with how many are offered) and off.
    public var toolsOn: @Sendable (Int) -> String
    public var toolsOff: String

    public init(
        user: String, assistant: String, writing: String, draft: String, suggestions: String,
        link: @escaping @Sendable (Int) -> String, loading: String, ready: String, stopped: String,
        backToChat: String, pageShown: String, noSuggestions: String,
        noSuchSuggestion: @escaping @Sendable (Int, Int) -> String,
        saved: @escaping @Sendable (String, Int) -> String, loaded: @escaping @Sendable (String, Int) -> String,
        toolsOn: @escaping @Sendable (Int) -> String, toolsOff: String
    ) {
        self.user = user
        self.assistant = assistant
        self.writing = writing
        self.draft = draft
        self.suggestions = suggestions
        self.link = link
        self.loading = loading
        self.ready = ready
        self.stopped = stopped
        self.backToChat = backToChat
        self.pageShown = pageShown
        self.noSuggestions = noSuggestions
        self.noSuchSuggestion = noSuchSuggestion
        self.saved = saved
        self.loaded = loaded
        self.toolsOn = toolsOn
        self.toolsOff = toolsOff
    }

    /// Plain English labels.
    public static let english = TerminalWording(
        user: "You", assistant: "Sanad", writing: "Sanad (writing)", draft: "Sanad (model draft)",
        suggestions: "Suggestions:", link: { "link \($0)" }, loading: "(loading the model…)",
        ready: "(the model is ready)", stopped: "(reply stopped)", backToChat: "(back to the chat)",
        pageShown: "(the chat is closed and the page shown; /back returns)",
        noSuggestions: "! no suggestions now; type your question in words",
        noSuchSuggestion: { "! no suggestion number \($0); pick 1 to \($1)" },
        saved: { "(chat saved to \($0), \($1) messages)" },
        loaded: { "(chat restored from \($0), \($1) messages; /history shows them)" },
        toolsOn: { "(tools on: the model picks one of \($0), Sanad runs it and answers from its result)" },
        toolsOff: "(tools off)")
}
