import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import SanadStructured

/// `sanad chat`: a chat session with the tier's engine and plugins, in the terminal or fed from a pipe.
enum ChatCommand: SanadCommand {
    static let name = "chat"
    static let summary = "Chat with the tier's model and plugins (suggestions, streamed replies, deep links)"
    static let help = """
        Usage: sanad chat [-m MODEL] [--backend ID] [-n N] [--temp T] [--repeat-penalty R] [-c CTX] [-t THREADS]
                          [--chat-template NAME|FILE] [--timeout S] [--min-free MIB] [--now DATE] [--no-memory-check]
                          [--allow-long-context] [--show-drafts] [--phrasing model|template] [--lang ar|en]
                          [--user FILE] [--receipts] [--receipt-include-text]

        Opens a chat: the greeting, then the plugins' suggestions numbered 1, 2, …; then reads lines from standard
        input (a terminal or a pipe; piped lines are echoed after '> ' so the transcript reads like a session).
          N               tap suggestion N (when there is one), else send N as text
          text            send text; the reply streams as it is generated
          /open N         follow link N (links are numbered in order) and show its page; the chat is dismissed
                          until /back. '/open SCHEME://…' follows a URL in the product's link format.
          /back           close the page and return to the chat
                          While a form tapped from a chip is open in the chat, typed text answers its question
                          (checked as in 'sanad form'); /back, /skip, /review and /pause (or the words back, skip,
                          review, pause) are the form's; pausing returns to the chat and a chip continues it.
          /chips          show the suggestions again
          /history        every message with its time and link
          /save FILE      save the history as JSON; /load FILE restores it
          /retry          load the engine again after it failed
          /receipt [FILE] sign the last model answer with the device key and write the receipt to FILE (or print
                          it); a reply the model did not write (a template sentence, a draft that failed its check)
                          has none, and it says so
          /tools on|off   with on, typed text goes to the model with every plugin's tools offered: it picks one
                          (constrained to the tools' argument schemas), Sanad runs it and shows the call and its
                          result, then the model answers from the result (free text, not checked)
          /quit           leave (end of input does the same)
        The labels are the product's (chosen in Wiring.swift). A reply streams after the
        assistant's "writing" label. Replies to a suggestion are grounded: the plugin gives the engine the facts, the
        model's wording (its draft) is generated unseen (stopped at the first number the data does not have) and
        checked for the facts, and only then does the reply stream: the model's text when it passed, else the
        plugin's template sentence at once. Nothing of a draft that failed is shown. A note under the message says
        which happened (✓ kept, ⚠ replaced); it is kept with the message as its 'check', not in its text. With
        --show-drafts (for debugging) each draft is printed after the "draft" label before the reply, the note says
        why it failed, and the saved history keeps it as the check's 'draft'. Typed text is grounded the same
        way when a plugin recognises it (a service and its fee, requirements or link; the user's documents, alerts
        or dependents; Arabic, Gulf dialect or English); text no plugin covers gets a list of what Sanad can help
        with, never free model text.
        Engine notes (loading, speed) go to standard error. Exit status 1 when the engine failed to load.

        Options:
          -m, --model MODEL      a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID           engine to use (default: the first available of the tier's list)
          -n, --max-tokens N     tokens per reply at most (default 96)
          --temp T               temperature; 0 = greedy (default 0)
          --repeat-penalty R     penalize recent tokens, 1 = off (default 1.1)
          -c, --ctx CTX          context length (default: the tier's)
          -t, --threads N        compute threads (default: the tier's)
          --chat-template NAME|FILE
                                 a built-in family (chatml, gemma, llama3) or a Jinja file instead of the
                                 model's own template (--template is an alias)
          --timeout S            stop a reply that takes longer than S seconds and say so (default 120; 0 = none)
          --min-free MIB         after a reply, unload the model when less than MIB of memory is available
                                 (MemAvailable, within the cgroup limit); the next message loads it again
                                 (default 128)
          --lang ar|en           the chat's language: the greeting, the suggestions, the labels and the pages
                                 (default: the product's). Each reply follows its message's language: Arabic
                                 script answers in Arabic, other letters in English, a mix by the majority of
                                 letters; a chip's reply and a message without letters in the chat's language
          --show-drafts          also print each grounded reply's model draft (checked, usually rejected) and
                                 keep it in the history's 'check'; for debugging, never for the people served
        \(ChatReceipts.help)
        \(phrasingHelp)
        \(PluginHost.clockHelp)
        \(PluginHost.userHelp)
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let maxTokens = try arguments.int("-n", "--max-tokens", range: 1...4096) ?? 96
        let temperature = try arguments.double("--temp").map(Float.init) ?? 0
        let repeatPenalty = try arguments.double("--repeat-penalty").map(Float.init) ?? 1.1
        let context = try arguments.int("-c", "--ctx", range: 16...1 << 24)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let template = try arguments.option("--chat-template", "--template").map(parseTemplate)
        let timeout = try arguments.double("--timeout") ?? ChatConfiguration.defaultReplyTimeout
        let minimumFree = try arguments.int("--min-free", range: 0...(1 << 30)) ?? 128
        let showDrafts = arguments.flag("--show-drafts")
        let receipts = ChatReceipts(
            includeText: arguments.flag("--receipt-include-text"), always: arguments.flag("--receipts"))
        let phrasing = try parsePhrasing(&arguments)
        let language = try parseLanguage(arguments.option("--lang"))
        let clock = try PluginHost.clock(&arguments)
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        let user = try PluginHost.userFile(&arguments, host: host)
        try arguments.finish()
        guard temperature >= 0, repeatPenalty > 0 else {
            throw UsageError("--temp must be ≥ 0 and --repeat-penalty > 0")
        }
        guard timeout >= 0, timeout.isFinite else { throw UsageError("--timeout must be a number of seconds ≥ 0") }

        let plugins = try PluginHost.makePlugins(host, now: clock, userData: user)
        var configuration = host.product.configuration(language: language)
        configuration.template = template
        configuration.generation.maxTokens = maxTokens
        configuration.replyTimeout = timeout > 0 ? timeout : nil
        configuration.memoryPressure = { SystemMemory.pressure(minimumFreeMiB: minimumFree) }
        configuration.showDrafts = showDrafts
        configuration.groundedPhrasing = phrasing ?? host.config.groundedPhrasing
        configuration.generation.sampling = SamplingParameters(
            temperature: temperature, topK: temperature > 0 ? 40 : 0, topP: temperature > 0 ? 0.95 : 1,
            minP: temperature > 0 ? 0.05 : 0, repetitionPenalty: repeatPenalty)
        try host.validateBackendID(backendID)
        let request = ModelRequest(
            model: modelName, backend: backendID, threads: threads, contextLength: context,
            checkMemory: load.checkMemory, allowLongContext: load.allowLongContext,
            cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV)
        let loader: EngineLoader = {
            let plan = try host.planModel(request)
            let backend = plan.backend
            printError("[loading \(plan.url.lastPathComponent) with backend \(backend.id), tier \(host.config.tier)]")
            let start = Date()
            let session = receipts.wrap(try await host.opener.open(plan), plan: plan, template: template)
            printError(
                "[ready: \(session.model.name), \(backend.id), context \(session.model.contextLength), "
                    + "\(String(format: "%.1f", Date().timeIntervalSince(start))) s]")
            return session
        }
        let session = ChatSession(plugins: plugins, configuration: configuration, now: clock, loadEngine: loader)
        let tools = ToolsMode(offered: host.tools(plugins).map(\.tool))
        let printer = ChatPrinter(
            linkFormat: configuration.linkFormat, words: host.product.terminal(for: configuration.language))
        let handler: ChatEventHandler = {
            printer.handle($0)
            receipts.observe($0)
        }
        await session.open(onEvent: handler)

        // The first SIGINT/SIGTERM during a reply stops it and returns to the prompt; at the prompt it exits (130).
        Interruption.shared.install()
        let piped = isatty(STDIN_FILENO) == 0
        while true {
            if !piped { writeOut("> ") }
            guard let raw = readLine() else { break }
            let line = raw.trimmingCharacters(in: .whitespaces)
            if piped { print("> \(raw)") }
            if line.isEmpty { continue }
            do {
                if line.hasPrefix("/"), await isTaskCommand(line, session) {
                    // A form open in the chat: its /back, /skip, /review, /pause go to it.
                    try await Interruption.shared.run { try await session.send(line, onEvent: handler) }
                } else if line.hasPrefix("/") {
                    if try await command(
                        line, session: session, printer: printer, tools: tools, receipts: receipts, handler: handler)
                        == false
                    {
                        break
                    }
                } else if let n = parseLocalizedNumber(line) {
                    // A bare number picks a suggestion (any digits: 2, ٢, ۲); one out of range is not a question.
                    let count = await session.suggestions.count
                    guard n >= 1, n <= count else {
                        print(count == 0 ? printer.words.noSuggestions : printer.words.noSuchSuggestion(n, count))
                        continue
                    }
                    try await Interruption.shared.run { try await session.sendSuggestion(number: n, onEvent: handler) }
                } else if tools.on {
                    let offered = tools.offered
                    try await Interruption.shared.run {
                        try await session.sendPrepared(
                            line, prepare: { try await callTool(line, offered, $0) }, onEvent: handler)
                    }
                } else {
                    try await Interruption.shared.run { try await session.send(line, onEvent: handler) }
                }
                if Interruption.shared.interrupted { print(printer.words.stopped) }
                if !line.hasPrefix("/") { try await receipts.attachAfterTurn(session) }
            } catch ChatError.navigationFailed, ChatError.invalidDeepLink {
                // Already shown: the session adds an error message to the chat.
            } catch {
                print("! \(error)")
            }
        }
        if case .failed = await session.engineState { return ExitCode.failure }
        return ExitCode.success
    }

    /// Whether `line` is a command of the task open in the chat (a form's `/back`, `/skip`, `/review`, `/pause`),
    /// which goes to the task as text while no page is shown.
    static func isTaskCommand(_ line: String, _ session: ChatSession) async -> Bool {
        guard await session.task != nil, await session.presented == nil else { return false }
        return ["/back", "/skip", "/review", "/pause"].contains(line.lowercased())
    }

    /// Runs a `/command`; false means quit.
    static func command(
        _ line: String, session: ChatSession, printer: ChatPrinter, tools: ToolsMode, receipts: ChatReceipts,
        handler: @escaping ChatEventHandler
    ) async throws -> Bool {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        switch parts[0] {
        case "/quit", "/exit":
            return false
        case "/open":
            if argument.contains("://") {
                try await session.follow(url: argument, onEvent: handler)
                return true
            }
            let links = printer.links
            guard let n = parseLocalizedNumber(argument), n >= 1, n <= links.count else {
                print(
                    "! /open needs a link number" + (links.isEmpty ? " (no links yet)" : " in 1…\(links.count)")
                        + " or a \(printer.linkFormat.scheme):// URL")
                return true
            }
            try await session.follow(links[n - 1], onEvent: handler)
        case "/back":
            await session.returnToChat()
            print(printer.words.backToChat)
        case "/chips":
            printer.printSuggestions(await session.suggestions)
        case "/history":
            var n = 0
            for m in await session.messages {
                print("[\(formatISO8601(m.timestamp))] \(printer.speaker(m)): \(m.content)")
                if let check = m.check { print("    \(check.note)") }
                if let link = m.deepLink {
                    n += 1
                    print("    [\(printer.words.link(n))] \(link.url(printer.linkFormat))")
                }
            }
        case "/save":
            guard !argument.isEmpty else { throw UsageError("/save needs a FILE") }
            try await session.saveHistory(to: URL(fileURLWithPath: argument))
            print(printer.words.saved(argument, await session.messages.count))
        case "/load":
            guard !argument.isEmpty else { throw UsageError("/load needs a FILE") }
            try await session.loadHistory(from: URL(fileURLWithPath: argument))
            let messages = await session.messages
            printer.reset(links: messages.compactMap(\.deepLink))
            print(printer.words.loaded(argument, messages.count))
        case "/receipt":
            try receipts.command(argument)
        case "/retry":
            guard await session.canRetry else {
                print(
                    "(the engine is \(await session.engineState == .ready ? "ready" : "not in a failed state"); nothing to retry)"
                )
                return true
            }
            await session.retry(onEvent: handler)
        case "/tools":
            switch argument {
            case "on": tools.on = true
            case "off": tools.on = false
            case "": break
            default: throw UsageError("/tools takes on or off")
            }
            print(tools.on ? printer.words.toolsOn(tools.offered.count) : printer.words.toolsOff)
        case "/help":
            print(
                "N = tap suggestion N · text = send · /open N · /back · /chips · /history · /save FILE · /load FILE · /receipt [FILE] · /retry · /tools on|off · /quit"
            )
        default:
            print("! unknown command '\(parts[0])'; /help lists them")
        }
        return true
    }
}

/// `--lang CODE` (nil when not given); an unknown code is a usage error.
func parseLanguage(_ code: String?) throws -> ChatLanguage? {
    guard let code else { return nil }
    guard let language = ChatLanguage(code: code) else {
        throw UsageError("--lang takes \(ChatLanguage.codes), not '\(code)'")
    }
    return language
}

extension ChatCommand {
    /// The model picks one of `tools` for `text` (constrained to the tool envelope, so only an offered tool with
    /// valid arguments can be called); the tool runs; the note shows the call and its result, and the model answers
    /// from the conversation with the result.
    static func callTool(_ text: String, _ tools: [any Tool], _ engine: any InferenceSession) async throws
        -> (note: String, prompt: [ChatMessage])
    {
        let outcome = try await ToolCalling.call(session: engine, messages: [.user(text)], tools: tools)
        let note = "🔧 \(outcome.tool) \(outcome.arguments.jsonString)\n\(outcome.result.prettyString)"
        return (note, outcome.messages)
    }
}
