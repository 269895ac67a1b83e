import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad compare`: run the same model on two engines and report where they disagree.
enum CompareCommand: SanadCommand {
    static let name = "compare"
    static let summary = "Compare two engines on one model: greedy continuations and teacher-forced logits"
    static let help = """
        Usage: sanad compare [-m MODEL] [--backends A,B] [-n N] [--prompts FILE] [-f TEXT_FILE] [-c CTX] \
        [--chunks K] [-b BATCH] [-t THREADS] [--json]

        Loads MODEL on both engines and, for every prompt, generates N tokens greedily on each (from a reset
        session; prompts are tokenized with BOS as the model says and special-token text parsed). Reports per prompt
        whether the prompt tokens and the continuations are identical and, if not, the first position where the
        generated tokens differ. With -f, also feeds TEXT_FILE's tokens (tokenized by engine A) to both engines in
        chunks of CTX tokens and reports the top-1 agreement rate of the next-token predictions and the largest and
        mean |Δlogit| over every position and vocabulary entry.

        Without --prompts, a built-in list of \(CompareCommand.defaultPrompts.count) prompts is used (English prose, a question, lists, numbers,
        Python and Swift code, JSON, Arabic, translation, and one chat-formatted turn).

        Options:
          -m, --model MODEL      a .gguf path, or a file name in the models folder (default: the tier's model)
          --backends A,B         the two engines (default: pure-swift,llama; the same id twice compares an engine
                                 with itself)
          -n, --max-tokens N     tokens to generate per prompt (default 32)
          --prompts FILE         prompts: a JSON array of strings or of {"name", "prompt"} objects, or else one
                                 prompt per non-empty line ("\\n" in a line stands for a newline)
          -f, --file TEXT_FILE   also compare teacher-forced logits over this UTF-8 text
          -c, --ctx CTX          context length of both sessions and the chunk size for -f (default 512)
          --chunks K             use only the first K chunks of TEXT_FILE (default: all)
          -b, --batch N          tokens per forward pass in both engines (default: the tier's). llama.cpp uses
                                 other matrix kernels from 32 tokens on, which round differently from its
                                 one-token path; -b 16 compares both engines on the one-token arithmetic
          -t, --threads N        compute threads (default: the tier's)
          --json                 one JSON object on standard output instead of the table
        \(LoadFlags.help)
        \(HostContext.optionsHelp)

        Exit codes: 0 every continuation identical, 2 some continuation (or prompt tokenization) differs,
        1 an engine failed, 64 usage error.
        """

    /// A named prompt; `chat` prompts are wrapped in the model's chat template (engine A's) as one user turn, so
    /// both engines get the same text.
    struct Prompt: Sendable {
        var name: String
        var text: String
        var chat = false
    }

    static let defaultPrompts: [Prompt] = [
        Prompt(name: "english-prose", text: "The history of the printing press begins in"),
        Prompt(name: "question", text: "What is the capital of France? The capital of France is"),
        Prompt(name: "list", text: "Here are five fruits:\n1. Apple\n2."),
        Prompt(name: "numbers", text: "1, 2, 3, 4, 5, 6,"),
        Prompt(name: "code-python", text: "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"),
        Prompt(name: "code-swift", text: "// Swift\nfunc greet(name: String) -> String {\n"),
        Prompt(name: "json", text: "{\"name\": \"Sanad\", \"type\":"),
        Prompt(name: "arabic", text: "اللغة العربية هي"),
        Prompt(name: "translate", text: "Translate to French: Good morning ->"),
        Prompt(name: "chat", text: "Give me three tips for staying focused while studying.", chat: true),
    ]

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let modelName = try arguments.option("-m", "--model")
        let ids = try arguments.list("--backends") ?? ["pure-swift", "llama"]
        let maxTokens = try arguments.int("-n", "--max-tokens", range: 1...1 << 20) ?? 32
        let promptsFile = try arguments.option("--prompts")
        let textFile = try arguments.option("-f", "--file")
        let context = try arguments.int("-c", "--ctx", range: 8...1 << 20) ?? 512
        let chunkLimit = try arguments.int("--chunks", range: 1...1 << 30)
        let batch = try arguments.int("-b", "--batch", range: 1...1 << 20)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        guard ids.count == 2 else {
            throw UsageError("--backends takes exactly two engine ids, got \(ids.count): \(ids.joined(separator: ","))")
        }
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        for id in ids { try host.validateBackendID(id) }
        let prompts = try promptsFile.map(readPrompts) ?? defaultPrompts
        guard !prompts.isEmpty else { throw UsageError("\(promptsFile ?? "--prompts"): no prompts in the file") }
        let text: String?
        if let textFile {
            guard let data = FileManager.default.contents(atPath: textFile) else {
                throw UsageError("cannot read -f \(textFile)")
            }
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = nil
        }

        var sessions: [any InferenceSession] = []
        var url = try host.resolveModel(modelName)
        for id in ids {
            let (session, plan) = try await host.openModel(
                ModelRequest(
                    model: modelName, backend: id, threads: threads, contextLength: context, batchSize: batch,
                    checkMemory: load.checkMemory, allowLongContext: load.allowLongContext,
                    cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
            sessions.append(session)
            url = plan.url
        }
        let engines = zip(ids, sessions).map { Engine(id: $0, session: $1) }

        if !json {
            print("compare \(url.lastPathComponent): \(ids[0]) vs \(ids[1]), greedy, \(maxTokens) tokens per prompt")
        }
        var results: [PromptResult] = []
        for var prompt in prompts {
            if prompt.chat {
                do {
                    prompt.text = try engines[0].session.applyChatTemplate(
                        [.user(prompt.text)], addAssistantPrompt: true)
                    prompt.chat = false
                } catch {
                    printError("note: skipping prompt '\(prompt.name)': \(error)")
                    continue
                }
            }
            let r = try await comparePrompt(prompt, engines, maxTokens: maxTokens)
            results.append(r)
            if !json { printRow(r, engines) }
        }
        var forced: ForcedResult?
        if let text, let textFile {
            forced = try teacherForced(
                text, file: textFile, engines, chunkSize: context, chunkLimit: chunkLimit)
        }
        let identical = results.filter(\.identical).count
        if json {
            print(report(url: url, ids: ids, maxTokens: maxTokens, results: results, forced: forced).prettyString)
        } else {
            print("\(identical)/\(results.count) prompts identical")
            if let forced { printForced(forced, ids) }
        }
        return identical == results.count ? ExitCode.success : ExitCode.mismatch
    }

    // MARK: Prompts

    static func readPrompts(_ path: String) throws -> [Prompt] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read --prompts \(path)")
        }
        if let value = try? JSONDecoder().decode(JSONValue.self, from: data), let items = value.arrayValue {
            return try items.enumerated().map { i, item in
                if let s = item.stringValue { return Prompt(name: "prompt-\(i + 1)", text: s) }
                guard let p = item["prompt"]?.stringValue else {
                    throw UsageError("\(path): item \(i) is neither a string nor an object with a \"prompt\" string")
                }
                return Prompt(name: item["name"]?.stringValue ?? "prompt-\(i + 1)", text: p)
            }
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        return lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.enumerated().map { i, line in
            Prompt(name: "line-\(i + 1)", text: line.replacingOccurrences(of: "\\n", with: "\n"))
        }
    }

    // MARK: Greedy continuations

    struct Engine {
        let id: String
        let session: any InferenceSession
    }

    struct Run {
        var promptTokens: [Int32]
        var ids: [Int32] = []
        var pieces: [String] = []
        var stop: StopReason?
        var tokensPerSecond: Double = 0
    }

    struct PromptResult {
        let prompt: Prompt
        let runs: [Run]
        var promptTokensEqual: Bool { runs[0].promptTokens == runs[1].promptTokens }
        /// The first index where the generated ids differ (a shorter run differs where it ends), nil if identical.
        var firstDivergence: Int? {
            let a = runs[0].ids
            let b = runs[1].ids
            if let i = zip(a, b).indices(where: { $0.0 != $0.1 }) { return i }
            return a.count == b.count ? nil : min(a.count, b.count)
        }
        var identical: Bool { promptTokensEqual && firstDivergence == nil }
    }

    static func comparePrompt(_ prompt: Prompt, _ engines: [Engine], maxTokens: Int) async throws -> PromptResult {
        var runs: [Run] = []
        for engine in engines {
            let session = engine.session
            session.reset()
            let text = prompt.text
            var run = Run(promptTokens: try session.tokenize(text, addSpecial: true, parseSpecial: true))
            let parameters = GenerationParameters(maxTokens: maxTokens, sampling: .greedy)
            for try await event in session.generate(.text(text, parseSpecial: true), parameters: parameters) {
                switch event {
                case .token(let id, let piece):
                    run.ids.append(id)
                    run.pieces.append(piece)
                case .finished(let reason, let stats):
                    run.stop = reason
                    run.tokensPerSecond = stats.generationTokensPerSecond
                }
            }
            session.reset()
            runs.append(run)
        }
        return PromptResult(prompt: prompt, runs: runs)
    }

    static func printRow(_ r: PromptResult, _ engines: [Engine]) {
        let name = r.prompt.name.padding(toLength: 16, withPad: " ", startingAt: 0)
        let speeds = r.runs.map { String(format: "%.1f", $0.tokensPerSecond) }.joined(separator: "/")
        if !r.promptTokensEqual {
            let a = r.runs[0].promptTokens.count
            let b = r.runs[1].promptTokens.count
            print("  \(name) PROMPT TOKENS DIFFER (\(a) vs \(b) tokens)")
        }
        if let i = r.firstDivergence {
            func at(_ run: Run) -> String {
                i < run.ids.count
                    ? "\(run.ids[i]) \(run.pieces[i].debugDescription)" : "end (\(run.stop?.rawValue ?? "?"))"
            }
            print(
                "  \(name) differ at token \(i): \(engines[0].id) \(at(r.runs[0])) vs \(engines[1].id) \(at(r.runs[1]))"
                    + "  [tok/s \(speeds)]")
        } else {
            let n = r.runs[0].ids.count
            let why = r.runs[0].stop.map { $0 == .maxTokens ? "" : ", \($0.rawValue)" } ?? ""
            print("  \(name) identical (\(n) tokens\(why))  [tok/s \(speeds)]")
        }
    }

    // MARK: Teacher-forced logits

    struct ForcedResult {
        let file: String
        let tokens: Int
        let tokenizationEqual: Bool
        let chunkSize: Int
        let chunks: Int
        let rows: Int
        let agreeing: Int
        let maxAbsDelta: Float
        let meanAbsDelta: Double
        /// Logit pairs where either engine gave NaN or infinity (left out of the Δ statistics).
        let nonFinite: Int
        var agreement: Double { rows > 0 ? Double(agreeing) / Double(rows) : 0 }
    }

    static func teacherForced(
        _ text: String, file: String, _ engines: [Engine], chunkSize: Int, chunkLimit: Int?
    ) throws -> ForcedResult {
        let a = engines[0].session
        let b = engines[1].session
        let tokens = try a.tokenize(text, addSpecial: true, parseSpecial: false)
        let tokenizationEqual = (try b.tokenize(text, addSpecial: true, parseSpecial: false)) == tokens
        var chunks = stride(from: 0, to: tokens.count, by: chunkSize).map {
            Array(tokens[$0..<min($0 + chunkSize, tokens.count)])
        }.filter { $0.count > 1 }
        if let chunkLimit { chunks = Array(chunks.prefix(chunkLimit)) }
        var rows = 0
        var agreeing = 0
        var maxAbs: Float = 0
        var sumAbs: Double = 0
        var entries = 0
        var nonFinite = 0
        for chunk in chunks {
            let la = try a.evaluateLogits(chunk, rows: nil)
            let lb = try b.evaluateLogits(chunk, rows: nil)
            for (ra, rb) in zip(la, lb) {
                rows += 1
                if argmax(ra) == argmax(rb) { agreeing += 1 }
                var rowSum: Float = 0
                for (x, y) in zip(ra, rb) {
                    let d = abs(x - y)
                    guard d.isFinite else {
                        nonFinite += 1
                        continue
                    }
                    rowSum += d
                    if d > maxAbs { maxAbs = d }
                }
                sumAbs += Double(rowSum)
                entries += min(ra.count, rb.count)
            }
        }
        return ForcedResult(
            file: file, tokens: tokens.count, tokenizationEqual: tokenizationEqual, chunkSize: chunkSize,
            chunks: chunks.count, rows: rows, agreeing: agreeing, maxAbsDelta: maxAbs,
            meanAbsDelta: entries > 0 ? sumAbs / Double(entries) : 0, nonFinite: nonFinite)
    }

    static func argmax(_ row: [Float]) -> Int {
        var best = 0
        for i in row.indices where row[i] > row[best] { best = i }
        return best
    }

    static func printForced(_ f: ForcedResult, _ ids: [String]) {
        print(
            "teacher-forced over \(f.file): \(f.tokens) tokens (tokenization \(f.tokenizationEqual ? "identical" : "DIFFERS")), "
                + "\(f.chunks) chunks of \(f.chunkSize)")
        print(
            String(
                format: "  top-1 agreement %.2f%% (%d/%d positions), max |Δlogit| %.4g, mean |Δlogit| %.4g",
                f.agreement * 100, f.agreeing, f.rows, Double(f.maxAbsDelta), f.meanAbsDelta))
        if f.nonFinite > 0 { print("  \(f.nonFinite) logit pairs were NaN or infinite in one engine") }
    }

    // MARK: JSON

    static func report(url: URL, ids: [String], maxTokens: Int, results: [PromptResult], forced: ForcedResult?)
        -> JSONValue
    {
        func ints(_ a: [Int32]) -> JSONValue { .array(a.map { .number(Double($0)) }) }
        func pair(_ f: (Run) -> JSONValue, _ r: PromptResult) -> JSONValue {
            .object([ids[0]: f(r.runs[0]), ids[1] + (ids[0] == ids[1] ? "#2" : ""): f(r.runs[1])])
        }
        let prompts: [JSONValue] = results.map { r in
            .object([
                "name": .string(r.prompt.name),
                "prompt": .string(r.prompt.text),
                "prompt_tokens_equal": .bool(r.promptTokensEqual),
                "identical": .bool(r.identical),
                "first_divergence": r.firstDivergence.map { .number(Double($0)) } ?? .null,
                "prompt_tokens": pair({ ints($0.promptTokens) }, r),
                "tokens": pair({ ints($0.ids) }, r),
                "text": pair({ .string($0.pieces.joined()) }, r),
                "stop": pair({ .string($0.stop?.rawValue ?? "none") }, r),
                "tokens_per_second": pair({ .number(($0.tokensPerSecond * 100).rounded() / 100) }, r),
            ])
        }
        var object: [String: JSONValue] = [
            "model": .string(url.path),
            "backends": .array(ids.map { .string($0) }),
            "max_tokens": .number(Double(maxTokens)),
            "prompts": .array(prompts),
            "identical": .number(Double(results.filter(\.identical).count)),
            "total": .number(Double(results.count)),
        ]
        if let f = forced {
            object["teacher_forced"] = .object([
                "file": .string(f.file), "tokens": .number(Double(f.tokens)),
                "tokenization_equal": .bool(f.tokenizationEqual), "chunk_size": .number(Double(f.chunkSize)),
                "chunks": .number(Double(f.chunks)), "positions": .number(Double(f.rows)),
                "top1_agreement": .number(f.agreement), "max_abs_logit_delta": .number(Double(f.maxAbsDelta)),
                "mean_abs_logit_delta": .number(f.meanAbsDelta), "non_finite_logits": .number(Double(f.nonFinite)),
            ])
        }
        return .object(object)
    }
}

extension Zip2Sequence {
    /// The offset of the first pair that satisfies `predicate`.
    fileprivate func indices(where predicate: ((Sequence1.Element, Sequence2.Element)) -> Bool) -> Int? {
        for (i, pair) in enumerated() where predicate(pair) { return i }
        return nil
    }
}
