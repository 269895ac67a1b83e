import Foundation
import SanadCore

/// Who words a grounded reply (a tapped suggestion, or typed text a plugin answers): the model, whose draft is
/// checked against the facts and replaced by the template when it fails, or the plugin's template sentence at once
/// (no model latency). A tier config chooses it from a measurement (`groundedReplies` in configs/, the share of
/// drafts that pass the check, measured on the product's evaluation set).
public enum GroundedPhrasing: String, Sendable, CaseIterable {
    case model, template
}

/// Texts and generation settings of a chat.
public struct ChatConfiguration: Sendable {
    /// What the chat itself says (greeting, system prompt, error messages, grounding notes), in `language`.
    public var wording: ChatWording
    /// The chat's own language: the greeting, the suggestions and the pages are in it, and so is the answer to a
    /// message with no letters. Every other message is answered in its own language (`ChatLanguage.of`).
    public var language: ChatLanguage
    /// The wording in the chat's other languages; a language missing here is answered with `wording`.
    public var wordings: [ChatLanguage: ChatWording]
    /// How replies are generated. Keep `maxTokens` small so a small device answers quickly.
    public var generation: GenerationParameters
    /// How many earlier messages go with typed text to the engine.
    public var historyMessages: Int
    /// A chat template family to apply instead of the engine's (for models whose file has no template).
    public var template: ChatPromptTemplate?
    /// The product's deep link URLs (`follow(url:)` parses them).
    public var linkFormat: DeepLinkFormat
    /// Seconds a reply may take, prompt included; then generation is cancelled and the chat says so (nil: no limit).
    public var replyTimeout: Double?
    /// Asked after every reply: a description of the memory pressure (`MemAvailable 180 MiB < 256 MiB`) when the
    /// device is short of memory, nil when not. Under pressure the engine is unloaded with a warning and loaded
    /// again for the next message.
    public var memoryPressure: (@Sendable () -> String?)?
    /// A debugging aid (`--show-drafts`): the model's unchecked wording of each grounded reply is reported
    /// (`ChatEvent.draftChecked`) and kept in the reply's check (`ReplyCheck.draft`, with the reasons it failed in
    /// the note). Off, no draft text leaves the session: a person sees only the verified reply.
    public var showDrafts: Bool
    /// Who words grounded replies (default: the model, checked).
    public var groundedPhrasing: GroundedPhrasing = .model

    public init(
        wording: ChatWording = ChatWording(), linkFormat: DeepLinkFormat = .standard,
        generation: GenerationParameters = ChatConfiguration.defaultGeneration, historyMessages: Int = 6,
        template: ChatPromptTemplate? = nil, replyTimeout: Double? = ChatConfiguration.defaultReplyTimeout,
        memoryPressure: (@Sendable () -> String?)? = nil, showDrafts: Bool = false,
        language: ChatLanguage = .arabic, wordings: [ChatLanguage: ChatWording] = [:]
    ) {
        self.wording = wording
        self.language = language
        self.wordings = wordings
        self.linkFormat = linkFormat
        self.generation = generation
        self.historyMessages = max(0, historyMessages)
        self.template = template
        self.replyTimeout = replyTimeout
        self.memoryPressure = memoryPressure
        self.showDrafts = showDrafts
    }

    /// Two minutes: far more than a 96-token reply takes on a small device, short enough that a stuck engine is
    /// noticed.
    public static let defaultReplyTimeout = 120.0

    /// The first message of every chat (`wording.greeting`).
    public var greeting: String { wording.greeting }
    /// The system prompt for typed text (`wording.systemPrompt`); a plugin's grounded reply brings its own.
    public var systemPrompt: String { wording.systemPrompt }

    /// The wording in `language`.
    public func wording(for language: ChatLanguage) -> ChatWording {
        language == self.language ? wording : wordings[language] ?? wording
    }

    /// 96 tokens, greedy with a mild repetition penalty, stopping at every known end-of-turn marker.
    public static let defaultGeneration = GenerationParameters(
        maxTokens: 96,
        sampling: SamplingParameters(temperature: 0, topK: 0, topP: 1, minP: 0, repetitionPenalty: 1.1),
        stopStrings: ChatTemplate.allCases.flatMap(\.endOfTurnMarkers) + ["<|im_start|>", "<start_of_turn>"])
}

/// Where the chat's engine stands.
public enum EngineState: Sendable, Equatable {
    case notLoaded
    case loading
    case ready
    /// Unloaded under memory pressure (the reason); the next message loads it again.
    case unloaded(String)
    /// Loading failed; input is disabled until `ChatSession.retry` succeeds.
    case failed(String)
}

/// Something the chat did, in order, for a front end to show.
public enum ChatEvent: Sendable, Equatable {
    /// A complete message was added (greeting, the user's message, a follow-up, an error).
    case messageAdded(ChatEntry)
    case suggestionsChanged([ChatSuggestion])
    case engineStateChanged(EngineState)
    case processingChanged(Bool)
    /// A reply with this message id began streaming. A grounded reply starts only once its text is verified, so
    /// what streams is what is stored.
    case replyStarted(id: String)
    /// The next piece of the reply; `index` counts 0, 1, 2, … without gaps.
    case replyPiece(id: String, index: Int, text: String)
    /// Only with `ChatConfiguration.showDrafts`: the model's wording of the grounded reply `id`, generated and
    /// checked before anything of the reply was shown, and the check's verdict. Sent before `replyStarted`.
    case draftChecked(id: String, draft: String, verdict: GroundingVerdict)
    /// The reply as stored: the generated text when it passed the grounding check, else the plugin's template
    /// (`entry.check` says which, as metadata); `verdict` is nil when there was nothing to check (free text, or the
    /// template answer to an uncovered question), and a rejection's reasons are empty unless drafts are shown.
    case replyFinished(ChatEntry, verdict: GroundingVerdict?, stats: GenerationStats?)
    /// A deep link was followed: the chat is dismissed and this screen is shown.
    case navigated(Destination)
}

/// Receives chat events as they happen.
public typealias ChatEventHandler = @Sendable (ChatEvent) -> Void

/// Loads the engine session the chat talks to.
public typealias EngineLoader = @Sendable () async throws -> any InferenceSession

/// A message submitted and waiting for its reply (`ChatSession.respond(to:)`).
public struct ChatTurn: Sendable, Equatable {
    /// The user's message, already in the history.
    public var userMessage: ChatEntry
    /// The suggestion that was tapped, if any.
    public var suggestion: ChatSuggestion?
}

/// A chat with plugins and one engine: messages, suggestions, processing state, streamed replies, deep links.
///
/// Flow: `open()` adds the greeting and the plugins' suggestions and loads the engine (a failure adds an error
/// message, disables input and allows `retry()`). `submit(_:)`/`tap(_:)` add the user's message and set
/// `isProcessing`; `respond(to:)` streams the reply (a tapped suggestion's plugin grounds the prompt and the reply is
/// checked, see `GroundedReply`: the model's draft is generated unseen, stopped at the first number the data does
/// not have, and checked; then the verified text, or else the template, streams and is stored, with the check as
/// `ChatEntry.check`; nothing of a draft is shown unless `showDrafts`), stores it,
/// then adds the plugins' follow-ups and clears `isProcessing`. Typed text
/// goes to the plugin whose `answer(to:)` is surest and is grounded and checked the same way; when none answers,
/// `wording.uncoveredQuestion` (if set) says what the plugins can do instead of letting the engine make text up.
/// A chip that begins a plugin's task (`FeaturePlugin.beginTask`, a form) opens it: until it ends or is paused,
/// typed text goes to that plugin (`continueTask`) and its reply is stored as written, without the engine.
/// `send(_:)` does both. `follow(_:)` opens a deep link's screen (dismissing the chat) or, when that fails, leaves
/// everything as it was and adds an error message.
public actor ChatSession {
    public let plugins: [any FeaturePlugin]
    public let configuration: ChatConfiguration
    private let loader: EngineLoader
    private let now: @Sendable () -> Date
    private var engine: (any InferenceSession)?
    private var opened = false
    private var pendingTurn: ChatTurn?

    /// Every message so far, oldest first (a reply being streamed is in `streamingReply` until it finishes).
    public private(set) var messages: [ChatEntry] = []
    /// The chips on offer.
    public private(set) var suggestions: [ChatSuggestion] = []
    /// True from a submitted message until its reply and follow-ups are stored.
    public private(set) var isProcessing = false
    public private(set) var engineState: EngineState = .notLoaded
    /// The reply being streamed, with the text so far (a grounded reply is here only once verified).
    public private(set) var streamingReply: ChatEntry?
    /// The screen a followed link opened; nil while the chat is shown.
    public private(set) var presented: Destination?
    /// The plugin conversation typed text goes to (a form being filled in); nil: the chat answers it.
    public private(set) var task: ChatTask?

    public init(
        plugins: [any FeaturePlugin], configuration: ChatConfiguration = ChatConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() }, loadEngine: @escaping EngineLoader
    ) {
        self.plugins = plugins
        self.configuration = configuration
        self.now = now
        self.loader = loadEngine
    }

    /// Whether the user can send: the engine is ready, no reply is pending and the chat is shown.
    public var isInputEnabled: Bool { canReply && !isProcessing && presented == nil }
    /// Whether a message can be answered: the engine is ready, or unloaded and loaded again on demand.
    private var canReply: Bool {
        if case .unloaded = engineState { return true }
        return engineState == .ready
    }
    /// Whether `retry()` would try to load the engine again.
    public var canRetry: Bool {
        if case .failed = engineState { return true }
        return false
    }
    /// The loaded model, once the engine is ready.
    public var model: ModelDescription? { engine?.model }
    /// The links of all messages, in order (what `/open N` numbers).
    public var links: [DeepLink] { messages.compactMap(\.deepLink) }

    /// Adds the greeting and the plugins' suggestions, then loads the engine. Only the first call does anything.
    public func open(onEvent: ChatEventHandler = { _ in }) async {
        guard !opened else { return }
        opened = true
        add(ChatEntry(content: configuration.greeting, isUser: false, timestamp: stamp()), onEvent)
        await refreshSuggestions(onEvent)
        await loadEngine(onEvent)
    }

    /// Asks every plugin for its chips again (a plugin that fails says so in the chat).
    private func refreshSuggestions(_ onEvent: ChatEventHandler) async {
        var chips: [ChatSuggestion] = []
        for plugin in plugins {
            do {
                chips += try await plugin.suggestions(in: configuration.language, openTask: task)
            } catch {
                add(
                    ChatEntry(
                        content: configuration.wording.suggestionsFailed(plugin.id, "\(error)"), isUser: false,
                        timestamp: stamp()),
                    onEvent)
            }
        }
        suggestions = chips
        onEvent(.suggestionsChanged(chips))
    }

    /// Tries to load the engine again after a failure; does nothing otherwise.
    public func retry(onEvent: ChatEventHandler = { _ in }) async {
        guard canRetry else { return }
        await loadEngine(onEvent)
    }

    private func loadEngine(_ onEvent: ChatEventHandler) async {
        engineState = .loading
        onEvent(.engineStateChanged(.loading))
        do {
            engine = try await loader()
            engineState = .ready
            onEvent(.engineStateChanged(.ready))
        } catch {
            engine = nil
            engineState = .failed("\(error)")
            onEvent(.engineStateChanged(engineState))
            add(
                ChatEntry(
                    content: configuration.wording.engineFailed("\(error)"), isUser: false,
                    timestamp: stamp()),
                onEvent)
        }
    }

    /// Adds the user's `text` and sets `isProcessing`. Throws for empty text, while a reply is pending, or while
    /// input is disabled.
    public func submit(_ text: String) throws -> ChatTurn {
        try begin(text, suggestion: nil)
    }

    /// Taps the suggestion with `id`: its text becomes the user's message.
    public func tap(_ id: String) throws -> ChatTurn {
        guard let s = suggestions.first(where: { $0.id == id }) else {
            throw ChatError.unknownSuggestion(id, count: suggestions.count)
        }
        return try begin(s.text, suggestion: s)
    }

    /// Taps the `number`th suggestion (1-based, as the CLI shows them).
    public func tap(number: Int) throws -> ChatTurn {
        guard number >= 1, number <= suggestions.count else {
            throw ChatError.unknownSuggestion("\(number)", count: suggestions.count)
        }
        return try begin(suggestions[number - 1].text, suggestion: suggestions[number - 1])
    }

    private func begin(_ text: String, suggestion: ChatSuggestion?) throws -> ChatTurn {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ChatError.emptyMessage }
        guard !isProcessing else { throw ChatError.busy }
        switch engineState {
        case .ready, .unloaded: break
        case .failed(let reason): throw ChatError.inputDisabled(reason: "the engine did not load (\(reason)); retry")
        case .notLoaded, .loading: throw ChatError.inputDisabled(reason: "the engine is not loaded yet")
        }
        guard presented == nil else {
            throw ChatError.inputDisabled(
                reason: "the chat is dismissed while '\(presented?.title ?? "")' is shown; go back first")
        }
        let entry = ChatEntry(content: text, isUser: true, timestamp: stamp())
        messages.append(entry)
        isProcessing = true
        let turn = ChatTurn(userMessage: entry, suggestion: suggestion)
        pendingTurn = turn
        return turn
    }

    /// Submits `text` and waits for the reply.
    public func send(_ text: String, onEvent: ChatEventHandler = { _ in }) async throws {
        let turn = try submit(text)
        onEvent(.messageAdded(turn.userMessage))
        onEvent(.processingChanged(true))
        await respond(to: turn, onEvent: onEvent)
    }

    /// Taps a suggestion and waits for the reply.
    public func sendSuggestion(number: Int, onEvent: ChatEventHandler = { _ in }) async throws {
        let turn = try tap(number: number)
        onEvent(.messageAdded(turn.userMessage))
        onEvent(.processingChanged(true))
        await respond(to: turn, onEvent: onEvent)
    }

    /// What `sendPrepared` asks its caller for, given the loaded engine: a message to add before the reply (what
    /// was done, e.g. a tool call and its result) and the conversation to answer.
    public typealias PreparedTurn =
        @Sendable (any InferenceSession) async throws -> (note: String, prompt: [ChatMessage])

    /// Sends `text`, lets `prepare` use the engine first (the CLI's `/tools on` has the model call a plugin's tool
    /// and runs it), adds the note it returns, then streams the engine's answer to the prompt it returns (free
    /// text: fitted to the context, with the timeout). A failure adds an error message.
    public func sendPrepared(_ text: String, prepare: PreparedTurn, onEvent: ChatEventHandler = { _ in }) async throws {
        let turn = try submit(text)
        onEvent(.messageAdded(turn.userMessage))
        onEvent(.processingChanged(true))
        defer {
            pendingTurn = nil
            streamingReply = nil
            isProcessing = false
            onEvent(.processingChanged(false))
        }
        if engine == nil, case .unloaded = engineState { await loadEngine(onEvent) }
        guard let engine else { return }
        let prepared: (note: String, prompt: [ChatMessage])
        do {
            prepared = try await prepare(engine)
        } catch {
            addError(configuration.wording.replyPreparationFailed("\(error)"), onEvent)
            return
        }
        add(ChatEntry(content: prepared.note, isUser: false, timestamp: stamp()), onEvent)
        let replyID = UUID().uuidString
        startReply(replyID, onEvent)
        do {
            engine.reset()
            let result = try await generate(
                try fitted(prepared.prompt, engine: engine), engine: engine, replyID: replyID, allowedNumbers: nil,
                onEvent)
            let text = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
            await store(
                ChatEntry(id: replyID, content: text.isEmpty ? "…" : text, isUser: false, timestamp: stamp()),
                verdict: nil, stats: result.stats, turn: turn,
                language: ChatLanguage.of(text) ?? configuration.language, onEvent)
            if result.timedOut {
                addError(
                    configuration.wording.replyTimedOut(Int((configuration.replyTimeout ?? 0).rounded(.up))), onEvent)
            }
        } catch {
            addError(configuration.wording.replyFailed("\(error)"), onEvent)
        }
    }

    /// Generates, streams and stores the reply to the pending `turn`, then the plugins' follow-ups; clears
    /// `isProcessing`. A failure adds an error message instead of a reply. Does nothing for a turn that is not
    /// pending.
    public func respond(to turn: ChatTurn, onEvent: ChatEventHandler = { _ in }) async {
        guard pendingTurn == turn else { return }
        // A tapped chip is in the chat's language; typed text is answered in its own.
        let language =
            turn.suggestion == nil
            ? ChatLanguage.of(turn.userMessage.content) ?? configuration.language : configuration.language
        let wording = configuration.wording(for: language)
        defer {
            pendingTurn = nil
            streamingReply = nil
            isProcessing = false
            onEvent(.processingChanged(false))
        }
        var grounded: GroundedReply?
        var prompt: [ChatMessage]
        do {
            if let reply = try await taskReply(to: turn, language: language) {
                let replyID = UUID().uuidString
                startReply(replyID, onEvent)
                streamVerified([reply.content], replyID: replyID, onEvent)
                let opened = task != nil
                task = reply.task
                await store(
                    ChatEntry(id: replyID, content: reply.content, isUser: false, timestamp: stamp()), verdict: nil,
                    stats: nil, turn: turn, language: language, onEvent)
                // A task that began or ended changes the chips (a form's resume chip and its progress).
                if opened != (task != nil) || turn.suggestion != nil { await refreshSuggestions(onEvent) }
                return
            }
            if let s = turn.suggestion, let plugin = plugins.first(where: { $0.id == s.pluginID }),
                let reply = try await plugin.reply(to: s, in: language)
            {
                grounded = reply
                prompt = reply.messages
            } else if turn.suggestion == nil,
                let answer = try await typedAnswer(turn.userMessage.content, language: language)
            {
                grounded = answer.reply
                prompt = answer.reply.messages
            } else if turn.suggestion == nil, let uncovered = wording.uncoveredQuestion {
                let replyID = UUID().uuidString
                let content = uncovered(plugins.flatMap { $0.capabilities(in: language) })
                startReply(replyID, onEvent)
                streamVerified([content], replyID: replyID, onEvent)
                await store(
                    ChatEntry(id: replyID, content: content, isUser: false, timestamp: stamp()), verdict: nil,
                    stats: nil, turn: turn, language: language, onEvent)
                return
            } else {
                prompt = [.system(wording.systemPrompt)]
                let earlier = messages.dropLast().suffix(configuration.historyMessages)
                prompt += earlier.map { $0.isUser ? .user($0.content) : .assistant($0.content) }
                prompt.append(.user(turn.userMessage.content))
            }
        } catch {
            addError(wording.replyPreparationFailed("\(error)"), onEvent)
            return
        }
        if let grounded, configuration.groundedPhrasing == .template {
            // The tier's measurement says this model's drafts mostly fail the check: the template, at once.
            let replyID = UUID().uuidString
            startReply(replyID, onEvent)
            streamVerified([grounded.fallback], replyID: replyID, onEvent)
            let reply = ChatEntry(
                id: replyID, content: grounded.fallback, isUser: false, timestamp: stamp(), deepLink: grounded.deepLink,
                check: ReplyCheck(verified: true, note: wording.templateChosenNote, draft: nil))
            await store(reply, verdict: nil, stats: nil, turn: turn, language: language, onEvent)
            return
        }
        if engine == nil, case .unloaded = engineState { await loadEngine(onEvent) }
        guard let engine else {
            if engineState == .ready { addError(wording.engineNotReady, onEvent) }
            return
        }
        let replyID = UUID().uuidString
        // Free text streams as it is generated; a grounded reply's draft is generated unseen and checked first.
        if grounded == nil { startReply(replyID, onEvent) }
        let result: GeneratedText
        do {
            engine.reset()
            result = try await generate(
                try fitted(prompt, engine: engine), engine: engine, replyID: replyID,
                allowedNumbers: grounded?.allowedNumbers, grounded == nil ? onEvent : { @Sendable _ in })
        } catch {
            addError(wording.replyFailed("\(error)"), onEvent)
            return
        }
        let generated = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        var verdict: GroundingVerdict?
        var content = generated.isEmpty ? "…" : generated
        var link: DeepLink?
        var check: ReplyCheck?
        let timeoutNote = wording.replyTimedOut(Int((configuration.replyTimeout ?? 0).rounded(.up)))
        if let grounded {
            let v = GroundingCheck.verify(generated, against: grounded, wording: wording)
            let shown = configuration.showDrafts
            // The reasons quote the draft (its words, its numbers): the event carries them only when asked.
            verdict = v.isVerified || shown ? v : .rejected(reasons: [])
            content = v.isVerified ? generated : grounded.fallback
            var note = v.note(wording)
            if !v.isVerified {
                // Why a draft failed quotes it (its foreign numbers, its language): only a debugging view says.
                note = result.timedOut ? timeoutNote : shown ? note : wording.templateNote
            }
            check = ReplyCheck(verified: v.isVerified, note: note, draft: shown && !v.isVerified ? generated : nil)
            link = grounded.deepLink
            if shown { onEvent(.draftChecked(id: replyID, draft: generated, verdict: v)) }
            startReply(replyID, onEvent)
            streamVerified(v.isVerified ? result.pieces : [content], replyID: replyID, onEvent)
        }
        let reply = ChatEntry(
            id: replyID, content: content, isUser: false, timestamp: stamp(), deepLink: link, check: check)
        await store(reply, verdict: verdict, stats: result.stats, turn: turn, language: language, onEvent)
        if result.timedOut && grounded == nil { addError(timeoutNote, onEvent) }
        if let pressure = configuration.memoryPressure?() {
            engine.reset()
            self.engine = nil
            engineState = .unloaded(pressure)
            onEvent(.engineStateChanged(engineState))
            addError(wording.engineUnloaded(pressure), onEvent)
        }
    }

    /// What one generation produced.
    private struct GeneratedText {
        var text = ""
        /// The non-empty pieces `text` was generated in.
        var pieces: [String] = []
        var stats: GenerationStats?
        var timedOut = false
    }

    /// Starts streaming reply `id`.
    private func startReply(_ id: String, _ onEvent: ChatEventHandler) {
        streamingReply = ChatEntry(id: id, content: "", isUser: false, timestamp: stamp())
        onEvent(.replyStarted(id: id))
    }

    /// Streams text that is already verified (or a template), piece by piece.
    private func streamVerified(_ pieces: [String], replyID: String, _ onEvent: ChatEventHandler) {
        for (index, piece) in pieces.enumerated() {
            streamingReply?.content += piece
            onEvent(.replyPiece(id: replyID, index: index, text: piece))
        }
    }

    /// Generates the reply to `prompt`, each piece as a `replyPiece` to `onEvent`. A grounded draft (`allowedNumbers`
    /// given) stops at the first whole number not in them; the whole generation is cancelled after
    /// `configuration.replyTimeout`.
    private func generate(
        _ prompt: [ChatMessage], engine: any InferenceSession, replyID: String, allowedNumbers: [String]?,
        _ onEvent: ChatEventHandler
    ) async throws -> GeneratedText {
        let templated =
            try engine.applyChatTemplate(prompt, addAssistantPrompt: true, override: configuration.template)
        let allowed = allowedNumbers.map { Set($0.map { canonicalNumber(normalizeArabic($0)) }) }
        let parameters = configuration.generation
        let timeout = configuration.replyTimeout
        // The consumer task ends before this function returns, so `onEvent` does not outlive the call.
        let result = try await withoutActuallyEscaping(onEvent) { onEvent in
            try await Self.consume(
                engine.generate(.text(templated, parseSpecial: true), parameters: parameters), replyID: replyID,
                allowed: allowed, timeout: timeout, onEvent)
        }
        streamingReply?.content = result.text
        return result
    }

    /// Reads `stream` on a task of its own, cancelled after `timeout` seconds (which ends the stream and so the
    /// generation within a token).
    private static func consume(
        _ stream: AsyncThrowingStream<GenerationEvent, Error>, replyID: String, allowed: Set<String>?,
        timeout: Double?, _ onEvent: @escaping ChatEventHandler
    ) async throws -> GeneratedText {
        let consumer = Task { () throws -> GeneratedText in
            var out = GeneratedText()
            var index = 0
            for try await event in stream {
                switch event {
                case .token(_, let piece):
                    guard !piece.isEmpty else { continue }
                    out.text += piece
                    out.pieces.append(piece)
                    onEvent(.replyPiece(id: replyID, index: index, text: piece))
                    index += 1
                case .finished(_, let s):
                    out.stats = s
                }
                // A draft that states a number the data does not have cannot pass: stop it there (ending the
                // stream cancels the generation) rather than let the person read on.
                if let allowed, hasForeignNumber(out.text, allowed: allowed) { break }
            }
            out.timedOut = Task.isCancelled
            return out
        }
        let watchdog = timeout.map { seconds in
            Task {
                try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
                consumer.cancel()
            }
        }
        defer { watchdog?.cancel() }
        return try await consumer.value
    }

    /// `prompt` shortened to fit the context with room for the reply: the oldest earlier messages are dropped
    /// first (the system message and the current message stay), then the current message is cut, so one huge
    /// message cannot make this or any later turn fail. The history itself keeps every message whole.
    private func fitted(_ prompt: [ChatMessage], engine: any InferenceSession) throws -> [ChatMessage] {
        let budget = engine.model.contextLength - configuration.generation.maxTokens
        func size(_ messages: [ChatMessage]) throws -> Int {
            let text =
                try engine.applyChatTemplate(messages, addAssistantPrompt: true, override: configuration.template)
            return try engine.tokenize(text, addSpecial: true, parseSpecial: true).count
        }
        var messages = prompt
        var count = try size(messages)
        while count > budget, messages.count > 2 {
            messages.remove(at: messages.first?.role == .system ? 1 : 0)
            count = try size(messages)
        }
        guard count > budget, let last = messages.popLast() else { return messages }
        // The longest prefix of the current message that fits (binary search; a prefix 64 times the budget in
        // characters holds more tokens than any context, so the search starts there).
        let characters = Array(last.content)
        var low = 0
        var high = min(characters.count, budget * 64)
        while low < high {
            let middle = (low + high + 1) / 2
            let candidate = ChatMessage(role: last.role, content: String(characters.prefix(middle)))
            if try size(messages + [candidate]) <= budget { low = middle } else { high = middle - 1 }
        }
        return messages + [ChatMessage(role: last.role, content: String(characters.prefix(low)))]
    }

    /// Whether `text` holds a whole number (a digit run that is not still growing at its end) outside `allowed`.
    private static func hasForeignNumber(_ text: String, allowed: Set<String>) -> Bool {
        var runs = digitRuns(normalizeArabic(text))
        if let last = normalizeArabic(text).unicodeScalars.last, ("0"..."9").contains(last) { runs.removeLast() }
        return runs.contains { !allowed.contains(canonicalNumber($0)) }
    }

    /// The reply of the task `turn` begins (a task chip) or continues (typed text while a task is open), or nil
    /// when neither: the turn is answered as usual (and a task its plugin no longer holds is closed).
    private func taskReply(to turn: ChatTurn, language: ChatLanguage) async throws -> TaskReply? {
        if let s = turn.suggestion {
            guard let plugin = plugins.first(where: { $0.id == s.pluginID }) else { return nil }
            return try await plugin.beginTask(for: s, in: configuration.language)
        }
        guard let open = task else { return nil }
        guard let plugin = plugins.first(where: { $0.id == open.pluginID }),
            let reply = try await plugin.continueTask(open, with: turn.userMessage.content, in: language)
        else {
            task = nil
            return nil
        }
        return reply
    }

    /// The surest plugin answer to typed `text` (highest score; the first plugin wins a tie), or nil.
    private func typedAnswer(_ text: String, language: ChatLanguage) async throws -> TypedAnswer? {
        let previous = messages.last { !$0.isUser && $0.deepLink != nil }?.deepLink
        let question = TypedQuestion(text, fallback: language, previousLink: previous)
        var best: TypedAnswer?
        for plugin in plugins {
            if let a = try await plugin.answer(to: question), a.score > (best?.score ?? 0) { best = a }
        }
        return best
    }

    /// Stores the finished `reply`, then adds the plugins' follow-ups.
    private func store(
        _ reply: ChatEntry, verdict: GroundingVerdict?, stats: GenerationStats?, turn: ChatTurn,
        language: ChatLanguage, _ onEvent: ChatEventHandler
    ) async {
        messages.append(reply)
        streamingReply = nil
        onEvent(.replyFinished(reply, verdict: verdict, stats: stats))
        let context = ReplyContext(
            suggestion: turn.suggestion, userText: turn.userMessage.content, reply: reply, history: messages,
            language: language)
        for plugin in plugins {
            do {
                for followUp in try await plugin.followUps(after: context) {
                    add(
                        ChatEntry(
                            content: followUp.content, isUser: false, timestamp: stamp(), deepLink: followUp.deepLink),
                        onEvent)
                }
            } catch {
                addError(configuration.wording(for: language).followUpsFailed(plugin.id, "\(error)"), onEvent)
            }
        }
    }

    /// Opens `link`'s screen: the chat is dismissed (`presented` is set). When no plugin can open it, nothing
    /// changes but an error message is added, and the error is thrown.
    @discardableResult
    public func follow(_ link: DeepLink, onEvent: ChatEventHandler = { _ in }) async throws -> Destination {
        do {
            let destination = try await navigate(link, plugins: plugins, language: configuration.language)
            presented = destination
            onEvent(.navigated(destination))
            return destination
        } catch let error as ChatError {
            addError(configuration.wording.linkFailed("\(error)"), onEvent)
            throw error
        }
    }

    /// Parses `url` and follows it; an invalid URL is reported like a failed navigation.
    @discardableResult
    public func follow(url: String, onEvent: ChatEventHandler = { _ in }) async throws -> Destination {
        let link: DeepLink
        do {
            link = try DeepLink(url: url, format: configuration.linkFormat)
        } catch {
            addError(configuration.wording.linkFailed("\(error)"), onEvent)
            throw error
        }
        return try await follow(link, onEvent: onEvent)
    }

    /// Closes the presented screen and shows the chat again.
    public func returnToChat() {
        presented = nil
    }

    /// Keeps `receipt` with the message `id` (the CLI's `--receipts` signs each model answer); false when there is no
    /// such message.
    @discardableResult
    public func attachReceipt(_ receipt: JSONValue, toMessage id: String) -> Bool {
        guard let index = messages.lastIndex(where: { $0.id == id }) else { return false }
        messages[index].receipt = receipt
        return true
    }

    /// Replaces the history with `entries` (suggestions and the engine are kept).
    public func restore(_ entries: [ChatEntry]) {
        messages = entries
    }

    /// Writes the history as JSON (`ChatEntry.encodeHistory`).
    public func saveHistory(to url: URL) throws {
        do {
            try ChatEntry.encodeHistory(messages).write(to: url, options: .atomic)
        } catch let error as ChatError {
            throw error
        } catch {
            throw ChatError.historyFile(path: url.path, problem: "cannot write (\(error.localizedDescription))")
        }
    }

    /// Replaces the history with the one saved in `url`.
    public func loadHistory(from url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ChatError.historyFile(path: url.path, problem: "cannot read (\(error.localizedDescription))")
        }
        messages = try ChatEntry.decodeHistory(data, file: url.path)
    }

    private func add(_ entry: ChatEntry, _ onEvent: ChatEventHandler) {
        messages.append(entry)
        onEvent(.messageAdded(entry))
    }

    private func addError(_ text: String, _ onEvent: ChatEventHandler) {
        add(ChatEntry(content: text, isUser: false, timestamp: stamp()), onEvent)
    }

    /// Now, to the whole second (so timestamps round-trip through JSON exactly).
    private func stamp() -> Date {
        Date(timeIntervalSince1970: now().timeIntervalSince1970.rounded(.down))
    }
}
