import Foundation
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad run MODEL`: a plain multi-turn chat with a model, as `ollama run` and `llama-cli -cnv` offer: no plugins,
/// no grounding, the model's own words streamed as they come.
enum RunCommand: SanadCommand {
    static let name = "run"
    static let summary = "Chat with a model in plain turns (system prompt, history, /save), streaming its replies"
    static let help = """
        Usage: sanad run [MODEL] [-m MODEL] [--backend ID] [--system TEXT] [-n N] [--temp T] [--seed S] [--top-k K]
                         [--top-p P] [--min-p P] [--repeat-penalty R] [--chat-template NAME|FILE] [-c CTX] [-t THREADS]

        A plain chat: each line read (a terminal, or piped lines echoed after '> ') is a user turn; the model's
        reply streams as it is generated, in the model's chat template (or --chat-template), after the --system
        message. The whole conversation is the prompt of every turn; when it no longer fits the context (with
        room for -n tokens of reply), the oldest turns are left out and standard error says how many. This is the
        model talking, unchecked: for the product's verified answers use 'sanad chat'. Ctrl-C stops a reply (what
        came is kept) and a second one, or Ctrl-C at the prompt, leaves.

          /bye              leave (end of input, /quit and /exit do the same)
          /clear            forget the conversation (the system message stays)
          /system TEXT      set the system message (empty TEXT removes it)
          /save FILE        write the conversation as JSON: {"system": …, "messages": [{"role", "content"}…]}
          /load FILE        continue a conversation /save wrote
          /help             these commands

        Options:
          MODEL, -m, --model MODEL
                                 a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID           engine to use (default: the first available of the tier's list)
          --system TEXT          the system message (default: none)
          -n, --max-tokens N     tokens per reply at most (default 512)
        \(SamplingFlags.help)
          --chat-template NAME|FILE
                                 a built-in family (chatml, gemma, llama3) or a Jinja file instead of the
                                 model's own template (--template is an alias)
          -c, --ctx CTX          context length (default: the tier's)
          -t, --threads N        compute threads (default: the tier's)
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        var modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let system = try arguments.option("--system")
        let maxTokens = try arguments.int("-n", "--max-tokens", range: 1...1 << 20) ?? 512
        let sampling = try SamplingFlags.parse(&arguments)
        let template = try arguments.option("--chat-template", "--template").map(parseTemplate)
        let context = try arguments.int("-c", "--ctx", range: 16...1 << 24)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        if let positional = try arguments.positionals(max: 1, names: "MODEL").first {
            guard modelName == nil else { throw UsageError("give the model once: MODEL or -m MODEL") }
            modelName = positional
        }
        let (session, plan) = try await host.openModel(
            ModelRequest(
                model: modelName, backend: backendID, threads: threads, contextLength: context,
                seed: sampling.parameters.seed, checkMemory: load.checkMemory,
                allowLongContext: load.allowLongContext,
                cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
        printError(
            "[\(plan.url.lastPathComponent) on \(plan.backend.id), context \(session.model.contextLength), seed "
                + "\(sampling.parameters.seed); /help for commands]")
        var conversation = PlainConversation(system: system)
        let parameters = GenerationParameters(maxTokens: maxTokens, sampling: sampling.parameters)

        // The first SIGINT/SIGTERM during a reply stops it and returns to the prompt; at the prompt it exits (130).
        Interruption.shared.install()
        let piped = isatty(STDIN_FILENO) == 0
        while true {
            if !piped { writeOut(">>> ") }
            guard let raw = readLine() else { break }
            if piped { print("> \(raw)") }
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("/") {
                do {
                    guard try command(line, &conversation) else { break }
                } catch {
                    print("! \(error)")
                }
                continue
            }
            conversation.messages.append(.user(line))
            do {
                let prompt = try conversation.prompt(
                    session: session, template: template, room: maxTokens
                ) { dropped in
                    printError(
                        "[context \(session.model.contextLength) is full: the oldest \(dropped) turn(s) are left out]")
                }
                let reply = try await Interruption.shared.run {
                    try await stream(prompt, session: session, parameters: parameters)
                }
                conversation.messages.append(.assistant(reply))
                if Interruption.shared.interrupted { printError("[stopped; the reply so far is kept]") }
            } catch {
                conversation.messages.removeLast()
                print("! \(error)")
            }
        }
        return ExitCode.success
    }

    /// Streams one reply to standard output from an empty cache; returns its text (what came, when cancelled).
    static func stream(_ prompt: [Int32], session: any InferenceSession, parameters: GenerationParameters)
        async throws -> String
    {
        session.reset()
        var reply = ""
        do {
            for try await event in session.generate(.tokens(prompt), parameters: parameters) {
                switch event {
                case .token(_, let piece):
                    reply += piece
                    writeOut(piece)
                case .finished(let reason, let stats):
                    writeOut("\n")
                    printError(
                        String(
                            format: "[%d prompt tokens at %.1f t/s, %d generated at %.1f t/s; stop: %@]",
                            stats.promptTokens, stats.promptTokensPerSecond, stats.generatedTokens,
                            stats.generationTokensPerSecond, reason.rawValue))
                }
            }
        } catch is CancellationError {
            writeOut("\n")
        }
        return reply.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a `/command`; false means leave.
    static func command(_ line: String, _ conversation: inout PlainConversation) throws -> Bool {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        switch parts[0] {
        case "/bye", "/quit", "/exit":
            return false
        case "/clear":
            conversation.messages.removeAll()
            print("[conversation cleared]")
        case "/system":
            conversation.system = argument.isEmpty ? nil : argument
            print(argument.isEmpty ? "[no system message]" : "[system message set]")
        case "/save":
            guard !argument.isEmpty else { throw UsageError("/save needs a FILE") }
            try Data(conversation.json.prettyString.utf8).write(to: URL(fileURLWithPath: argument))
            print("[saved \(conversation.messages.count) messages to \(argument)]")
        case "/load":
            guard !argument.isEmpty else { throw UsageError("/load needs a FILE") }
            conversation = try PlainConversation(file: argument)
            print("[loaded \(conversation.messages.count) messages from \(argument)]")
        case "/help", "/?":
            let commands = help.split(separator: "\n").filter { $0.hasPrefix("  /") }
            print(commands.joined(separator: "\n"))
        default:
            print("! unknown command \(parts[0]); /help lists them")
        }
        return true
    }
}

/// The conversation of `sanad run`: an optional system message and the turns, as /save writes them.
struct PlainConversation {
    var system: String?
    var messages: [ChatMessage] = []

    init(system: String?) { self.system = system }

    /// A conversation /save wrote; errors name the file and what is wrong.
    init(file: String) throws {
        let value: JSONValue
        do {
            value = try StrictJSON().parse(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        } catch {
            throw UsageError("\(file): \(error)")
        }
        guard case .object(let root) = value, case .array(let items)? = root["messages"] else {
            throw UsageError("\(file): expected {\"system\": …, \"messages\": [{\"role\": …, \"content\": …}, …]}")
        }
        system = root["system"]?.stringValue
        for (i, item) in items.enumerated() {
            guard let role = item["role"]?.stringValue.flatMap(ChatRole.init(rawValue:)), role != .system,
                let content = item["content"]?.stringValue
            else {
                throw UsageError("\(file): messages[\(i)] needs a role (user, assistant or tool) and a content string")
            }
            messages.append(ChatMessage(role: role, content: content))
        }
    }

    var json: JSONValue {
        .object([
            "system": system.map(JSONValue.string) ?? .null,
            "messages": .array(
                messages.map { .object(["role": .string($0.role.rawValue), "content": .string($0.content)]) }),
        ])
    }

    /// The prompt's tokens: the template over the system message and the turns, with the assistant's turn opened.
    /// While it leaves less than `room` tokens of the context, the oldest turn (a user message and what follows
    /// it up to the next one) is left out of the conversation and `dropped` is told how many went.
    mutating func prompt(
        session: any InferenceSession, template: ChatPromptTemplate?, room: Int, dropped: (Int) -> Void
    ) throws -> [Int32] {
        var left = 0
        defer { if left > 0 { dropped(left) } }
        while true {
            let all = (system.map { [ChatMessage.system($0)] } ?? []) + messages
            let text =
                try session.applyChatTemplate(all, addAssistantPrompt: true, override: template)
            let tokens = try session.tokenize(text, addSpecial: true, parseSpecial: true)
            if tokens.count + room <= session.model.contextLength { return tokens }
            // The oldest turn goes; the message being answered stays.
            guard let next = messages.dropFirst().firstIndex(where: { $0.role == .user }) else {
                throw SanadError.engine(
                    "this message with the system message and a reply of up to \(room) tokens needs "
                        + "\(tokens.count + room) tokens, more than the context of \(session.model.contextLength): "
                        + "shorten it, lower -n or raise -c")
            }
            messages.removeSubrange(0..<next)
            left += 1
        }
    }
}
