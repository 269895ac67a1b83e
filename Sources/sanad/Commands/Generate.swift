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
        [--min-p P] [--repeat-penalty R] [--chat] [--system TEXT] [--chat-template NAME|FILE] [--stop STR]... \
        [-c CTX] [-t THREADS] [--truncate] [--json-schema SCHEMA | -jf FILE | --grammar GBNF | --grammar-file FILE] \
        [--no-memory-check] [--allow-long-context] [-p PROMPT | -f FILE | PROMPT]

        Writes only the continuation to standard output, piece by piece as it is generated; at the end the prompt
        and generation speeds, why generation stopped and the seed go to standard error. PROMPT '-' reads standard
        input. The flags follow llama.cpp's llama-cli where they overlap (-p, -f, -n, -c, -t, --temp, --seed, the
        sampling flags, --grammar/--grammar-file, --json-schema/-jf); without --seed the seed is random.

        Options:
          -m, --model MODEL      a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID           engine to use (default: the first available of the tier's list)
          -n, --max-tokens N     tokens to generate at most (default 256)
        \(SamplingFlags.help)
          --chat                 wrap the prompt in the model's chat template as a user turn
          --system TEXT          a system message (with --chat)
          --chat-template NAME|FILE
                                 a built-in family (chatml, gemma, llama3) or a Jinja file instead of the
                                 model's own template (--template is an alias)
          --stop STR             stop when STR appears (repeatable); STR itself is not printed
          -c, --ctx CTX          context length (default: the tier's)
          -t, --threads N        compute threads (default: the tier's)
          --truncate             keep the end of a prompt that does not fit the context instead of failing
          -p, --prompt PROMPT    the prompt (as the positional PROMPT)
          -f, --file FILE        read the prompt from FILE ('-' = standard input)
          --json-schema SCHEMA   the output must be one JSON document valid for the JSON Schema SCHEMA, given
                                 inline ('{"type": "object", …}'; a file name is still read, as before) — the
                                 subset README.md "Structured output" lists; every engine, the llama engine
                                 through a GBNF grammar; generation ends when the document is complete, and
                                 it always closes within -n (an -n below the shortest document is refused)
          -jf, --json-schema-file FILE
                                 the same, the schema read from FILE
          --grammar GBNF         the output must match the GBNF grammar GBNF, given inline ('root ::= …'; a
                                 file name is still read) — start rule root; llama engine only; generation
                                 ends when the grammar is complete
          --grammar-file FILE    the same, the grammar read from FILE
        \(ReceiptFlags.help)
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
        let sampling = try SamplingFlags.parse(&arguments)
        let system = try arguments.option("--system")
        let template = try arguments.option("--chat-template", "--template").map(parseTemplate)
        let context = try arguments.int("-c", "--ctx", range: 1...1 << 24)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let file = try arguments.option("-f", "--file")
        let promptFlag = try arguments.option("-p", "--prompt")
        let constraintSource = try ConstraintSource.parse(&arguments)
        let load = try LoadFlags.parse(&arguments)
        let receiptFlags = try ReceiptFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        let positionals = try arguments.positionals(max: 1, names: "PROMPT")
        if promptFlag != nil && (file != nil || !positionals.isEmpty) {
            throw UsageError("give the prompt one way: -p PROMPT, -f FILE or the positional PROMPT")
        }
        let prompt = try promptText(
            positionals: promptFlag.map { [$0] } ?? positionals, file: file, dropTrailingNewline: true)
        if system != nil && !chat { throw UsageError("--system needs --chat") }
        let schemaConstraint = try constraintSource?.schemaConstraint()
        let constraint: (any TokenConstraint)? = try schemaConstraint ?? constraintSource?.grammar()
        if let schemaConstraint, let source = constraintSource, let shortest = schemaConstraint.shortestDocument,
            maxTokens < shortest
        {
            throw UsageError(
                "--json-schema: the shortest document valid for \(source.name) takes \(shortest) tokens (one byte "
                    + "per token, what the constraint can promise to close in); -n \(maxTokens) cannot hold it: use "
                    + "-n \(shortest) or more")
        }

        let (session, plan) = try await host.openModel(
            ModelRequest(
                model: modelName, backend: backendID, threads: threads, contextLength: context,
                seed: sampling.parameters.seed,
                checkMemory: load.checkMemory, allowLongContext: load.allowLongContext,
                cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
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
            sampling: sampling.parameters,
            stopStrings: stops, truncatePrompt: truncate, constraint: constraint)
        let receipt = try receiptFlags.recorder(
            session: session, plan: plan, prompt: text, parameters: parameters,
            chatTemplate: chat ? template?.description ?? "model" : nil)
        // The first SIGINT/SIGTERM stops generation: the line is ended, statistics printed, exit 130.
        Interruption.shared.install()
        let input = GenerationInput.text(text, parseSpecial: true)
        let engineID = backend.id
        let summary = try await Interruption.shared.run {
            () -> (finished: Bool, complete: Bool, generated: Int, seconds: Double) in
            let start = Date()
            var generated = 0
            var output: [UInt8] = []
            for try await event in session.generate(input, parameters: parameters).recorded(by: receipt) {
                switch event {
                case .token(_, let piece):
                    generated += 1
                    if schemaConstraint != nil { output += piece.utf8 }
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
                            + "stop: \(reason.rawValue) | backend: \(engineID) | seed: \(sampling.parameters.seed)")
                    // A document that closes on the last token -n allows ends with max-tokens, whole.
                    let complete = reason == .endOfGeneration || (schemaConstraint?.isComplete(output) ?? false)
                    return (true, complete, generated, Date().timeIntervalSince(start))
                }
            }
            return (false, false, generated, Date().timeIntervalSince(start))
        }
        try receipt?.write()
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
}

/// Where `--json-schema`/`-jf` or `--grammar`/`--grammar-file` put the constraint: the text, and how errors name it.
enum ConstraintSource {
    case schema(JSONValue, name: String)
    case grammar(String, name: String)

    /// The four flags, inline or from a file (at most one of them); a value of the inline flags that is not inline
    /// text (a schema starts with `{`, a grammar holds `::=`) is read as a file name, as these flags used to take.
    static func parse(_ arguments: inout Arguments) throws -> ConstraintSource? {
        let given = [
            ("--json-schema", try arguments.option("--json-schema")),
            ("-jf", try arguments.option("-jf", "--json-schema-file")),
            ("--grammar", try arguments.option("--grammar")),
            ("--grammar-file", try arguments.option("--grammar-file")),
        ].compactMap { flag, value in value.map { (flag, $0) } }
        guard let (flag, value) = given.first else { return nil }
        guard given.count == 1 else {
            throw UsageError("\(given.map(\.0).joined(separator: " and ")) exclude each other: give one constraint")
        }
        let inline =
            flag == "--json-schema"
            ? value.drop { $0.isWhitespace }.hasPrefix("{")
            : flag == "--grammar" ? value.contains("::=") : false
        let text: String
        let name: String
        if inline {
            (text, name) = (value, "the inline \(flag == "--grammar" ? "grammar" : "schema")")
        } else {
            guard let data = FileManager.default.contents(atPath: value) else {
                throw UsageError("\(flag): cannot read '\(value)' (no such file or not readable)")
            }
            (text, name) = (String(decoding: data, as: UTF8.self), value)
        }
        if flag.contains("grammar") {
            guard text.contains(where: { !$0.isWhitespace }) else { throw UsageError("\(flag): \(name) is empty") }
            return .grammar(text, name: name)
        }
        do {
            return .schema(try StrictJSON().parse(Array(text.utf8)), name: name)
        } catch {
            throw UsageError("--json-schema: \(name): \(error)")
        }
    }

    var name: String {
        switch self {
        case .schema(_, let name), .grammar(_, let name): return name
        }
    }

    /// The compiled schema; errors name the schema and the JSON pointer.
    func schemaConstraint() throws -> SchemaConstraint? {
        guard case .schema(let schema, let name) = self else { return nil }
        do {
            return try SchemaConstraint(schema: schema)
        } catch {
            throw UsageError("--json-schema: \(name): \(error.description)")
        }
    }

    /// The GBNF grammar (libllama checks it when generation starts).
    func grammar() -> GBNFGrammar? {
        guard case .grammar(let text, _) = self else { return nil }
        return GBNFGrammar(text)
    }
}

/// Two decimals.
private func format(_ value: Double) -> String { String(format: "%.2f", value) }
