import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import SanadStructured

/// `sanad generate`: stream a model's continuation of a prompt.
enum GenerateCommand: SanadCommand {
    static let name = "generate"
    static let summary = "Generate text from a prompt, streaming it as it is produced"
    static let help = """
        Usage: sanad generate [-m MODEL] [--backend ID] [-n N] [--temp T] [--seed S] [--top-k K] [--top-p P] \
        [--min-p P] [--repeat-penalty R] [--chat] [--system TEXT] [--chat-template NAME|FILE] [--stop STR]... [-c CTX] \
        [-t THREADS] [--truncate] [--json-schema FILE | --grammar FILE] [--no-memory-check] [--allow-long-context] [-f FILE | PROMPT]

        Writes only the continuation to standard output, piece by piece as it is generated; at the end the prompt
        and generation speeds and why generation stopped go to standard error. PROMPT '-' reads standard input.

        Options:
          -m, --model MODEL      a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID           engine to use (default: the first available of the tier's list)
          -n, --max-tokens N     tokens to generate at most (default 256)
          --temp T               temperature; 0 = greedy (default 0.8)
          --seed S               sampling seed (default 12648430)
          --top-k K              keep the K most likely tokens, 0 = off (default 40)
          --top-p P              nucleus sampling, 1 = off (default 0.95)
          --min-p P              drop tokens below P × the best one's probability, 0 = off (default 0.05)
          --repeat-penalty R     penalize recent tokens, 1 = off (default 1)
          --chat                 wrap the prompt in the model's chat template as a user turn
          --system TEXT          a system message (with --chat)
          --chat-template NAME|FILE
                                 a built-in family (chatml, gemma, llama3) or a Jinja file instead of the
                                 model's own template (--template is an alias)
          --stop STR             stop when STR appears (repeatable); STR itself is not printed
          -c, --ctx CTX          context length (default: the tier's)
          -t, --threads N        compute threads (default: the tier's)
          --truncate             keep the end of a prompt that does not fit the context instead of failing
          -f, --file FILE        read the prompt from FILE ('-' = standard input)
          --json-schema FILE     the output must be one JSON document valid for the JSON Schema in FILE (the
                                 subset README.md "Structured output" lists; every engine, the llama engine
                                 through a GBNF grammar); generation ends when the document is complete
          --grammar FILE         the output must match the GBNF grammar in FILE (start rule root; llama engine
                                 only); generation ends when the grammar is complete
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let stops = repeatedValues(of: "--stop", in: arguments.items)
        _ = try arguments.option("--stop")
        let chat = arguments.flag("--chat")
        let truncate = arguments.flag("--truncate")
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let maxTokens = try arguments.int("-n", "--max-tokens", range: 0...1 << 24) ?? 256
        let defaults = SamplingParameters()
        let temperature = try arguments.double("--temp").map(Float.init) ?? defaults.temperature
        let seedText = try arguments.option("--seed")
        let topK = try arguments.int("--top-k", range: 0...1 << 24) ?? defaults.topK
        let topP = try arguments.double("--top-p").map(Float.init) ?? defaults.topP
        let minP = try arguments.double("--min-p").map(Float.init) ?? defaults.minP
        let repeatPenalty = try arguments.double("--repeat-penalty").map(Float.init) ?? defaults.repetitionPenalty
        let system = try arguments.option("--system")
        let template = try arguments.option("--chat-template", "--template").map(parseTemplate)
        let context = try arguments.int("-c", "--ctx", range: 1...1 << 24)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let file = try arguments.option("-f", "--file")
        let schemaFile = try arguments.option("--json-schema")
        let grammarFile = try arguments.option("--grammar")
        let load = LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        let prompt = try promptText(
            positionals: try arguments.positionals(max: 1, names: "PROMPT"), file: file, dropTrailingNewline: true)
        var seed = defaults.seed
        if let seedText {
            guard let s = UInt64(seedText) else {
                throw UsageError("'--seed' expects a non-negative integer, got '\(seedText)'")
            }
            seed = s
        }
        guard temperature >= 0 else { throw UsageError("'--temp' must be ≥ 0 (0 = greedy), got \(temperature)") }
        guard (0...1).contains(topP), (0...1).contains(minP), repeatPenalty > 0 else {
            throw UsageError("--top-p and --min-p must be in 0…1 and --repeat-penalty positive")
        }
        if system != nil && !chat { throw UsageError("--system needs --chat") }
        if schemaFile != nil && grammarFile != nil {
            throw UsageError("--json-schema and --grammar exclude each other")
        }
        let constraint: (any TokenConstraint)? =
            try schemaFile.map(loadSchemaConstraint) ?? grammarFile.map(loadGrammar)

        let (session, plan) = try await host.openModel(
            ModelRequest(
                model: modelName, backend: backendID, threads: threads, contextLength: context, seed: seed,
                checkMemory: load.checkMemory, allowLongContext: load.allowLongContext))
        let backend = plan.backend

        var text = prompt
        if chat {
            var messages: [ChatMessage] = []
            if let system { messages.append(.system(system)) }
            messages.append(.user(prompt))
            text = try session.applyChatTemplate(messages, addAssistantPrompt: true, override: template)
        }
        let parameters = GenerationParameters(
            maxTokens: maxTokens,
            sampling: SamplingParameters(
                temperature: temperature, topK: topK, topP: topP, minP: minP, repetitionPenalty: repeatPenalty,
                seed: seed),
            stopStrings: stops, truncatePrompt: truncate, constraint: constraint)
        // The first SIGINT/SIGTERM stops generation: the line is ended, statistics printed, exit 130.
        Interruption.shared.install()
        let input = GenerationInput.text(text, parseSpecial: true)
        let engineID = backend.id
        let summary = try await Interruption.shared.run {
            () -> (finished: Bool, complete: Bool, generated: Int, seconds: Double) in
            let start = Date()
            var generated = 0
            for try await event in session.generate(input, parameters: parameters) {
                switch event {
                case .token(_, let piece):
                    generated += 1
                    if !piece.isEmpty { writeOut(piece) }
                case .finished(let reason, let stats):
                    writeOut("\n")
                    printError(
                        "prompt: \(stats.promptTokens) tokens, \(format(stats.promptSeconds)) s, "
                            + "\(format(stats.promptTokensPerSecond)) tokens/s | generation: \(stats.generatedTokens) "
                            + "tokens, \(format(stats.generationSeconds)) s, "
                            + "\(format(stats.generationTokensPerSecond)) tokens/s | "
                            + (stats.constraintSeconds > 0 && stats.generatedTokens > 0
                                ? "constraint: \(format(1000 * stats.constraintSeconds / Double(stats.generatedTokens))) ms/token"
                                    + (stats.constraintPreparationSeconds > 0
                                        ? " (+ \(format(stats.constraintPreparationSeconds)) s once to index the vocabulary)"
                                        : "") + " | "
                                : "")
                            + "stop: \(reason.rawValue) | backend: \(engineID)")
                    return (true, reason == .endOfGeneration, generated, Date().timeIntervalSince(start))
                }
            }
            return (false, false, generated, Date().timeIntervalSince(start))
        }
        if !summary.finished || Interruption.shared.interrupted {
            if !summary.finished { writeOut("\n") }
            let rate = summary.seconds > 0 ? Double(summary.generated) / summary.seconds : 0
            printError(
                "generation: \(summary.generated) tokens, \(format(summary.seconds)) s (prompt included), "
                    + "\(format(rate)) tokens/s | stop: cancelled (interrupted) | backend: \(engineID)")
            return Interruption.exitStatus
        }
        if constraint != nil && !summary.complete {
            printError("the constrained output is incomplete: generation stopped before it ended; raise -n")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    /// The GBNF grammar in `path` (libllama checks it when generation starts).
    static func loadGrammar(_ path: String) throws -> GBNFGrammar {
        let text: String
        do {
            text = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        } catch {
            throw UsageError("--grammar: cannot read '\(path)' as UTF-8 text: \(error.localizedDescription)")
        }
        guard text.contains(where: { !$0.isWhitespace }) else { throw UsageError("--grammar: \(path) is empty") }
        return GBNFGrammar(text)
    }

    /// The JSON Schema in `path`, compiled; errors name the file and the JSON pointer.
    static func loadSchemaConstraint(_ path: String) throws -> SchemaConstraint {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw UsageError("--json-schema: cannot read '\(path)': \(error.localizedDescription)")
        }
        let schema: JSONValue
        do {
            schema = try StrictJSON().parse(bytes)
        } catch {
            throw UsageError("--json-schema: \(path): \(error)")
        }
        do {
            return try SchemaConstraint(schema: schema)
        } catch {
            throw UsageError("--json-schema: \(path): \(error.description)")
        }
    }
}

/// Two decimals.
private func format(_ value: Double) -> String { String(format: "%.2f", value) }
