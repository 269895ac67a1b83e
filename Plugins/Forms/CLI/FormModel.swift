import FormsPlugin
import Foundation
import SanadCommandLine
import SanadCore
import SanadHost
import SanadIndex

/// `sanad form answer … --provider model` and `sanad form eval`: free text read into several fields by a model
/// (issue 22 items 6 and 7), each proposal shown and checked like a typed answer, the rules provider when the model
/// cannot answer.
extension FormCommand {
    /// `--provider model` with `-m`, `--backend`, `--chat-template`, `--max-tokens` and the host options.
    struct ModelOptions {
        var model: String?
        var backend: String?
        var template: ChatPromptTemplate?
        var maxTokens: Int
        var host: HostContext
        /// `--provider rules-then-model`: the model only reads text the rules provider's answer does not fit.
        var rulesFirst: Bool
        /// `--index FILE` (from `sanad ingest --index`): the `context` passages closest to the person's text go into
        /// the prompt, and the evidence cites those that state a proposed value.
        var index: String? = nil
        var context = 3

        /// The model options of `arguments`, or nil (and none of them allowed) unless `--provider model` is given.
        static func parse(_ arguments: inout Arguments, provider: String?) throws -> ModelOptions? {
            let model = try arguments.option("-m", "--model")
            let backend = try arguments.option("--backend")
            let template = try arguments.option("--chat-template", "--template").map(parseTemplate)
            let maxTokens = try arguments.int("--max-tokens", range: 16...4096)
            let index = try arguments.option("--index")
            let context = try arguments.int("--context", range: 1...20)
            let hostOptions = try HostOptions.parse(&arguments)
            switch provider ?? "rules" {
            case "rules":
                if model != nil || backend != nil || template != nil || maxTokens != nil || index != nil
                    || context != nil || !hostOptions.isEmpty
                {
                    throw UsageError(
                        "-m, --backend, --chat-template, --max-tokens, --index, --context, --config, --tier, --models and "
                            + "--no-tuning need --provider model or rules-then-model")
                }
                return nil
            case "model", "rules-then-model":
                return ModelOptions(
                    model: model, backend: backend, template: template, maxTokens: maxTokens ?? 160,
                    host: try HostContext.load(hostOptions), rulesFirst: provider == "rules-then-model", index: index,
                    context: context ?? 3)
            default: throw UsageError("--provider '\(provider ?? "")' is not one of rules, model, rules-then-model")
            }
        }

        /// The model loaded on its engine, as a provider; its evidence names the model file and the engine.
        func open() async throws -> ModelAnswerProvider {
            let (session, plan) = try await host.openModel(ModelRequest(model: model, backend: backend))
            return ModelAnswerProvider(
                session: session, modelName: "\(plan.url.lastPathComponent) on \(plan.backend.id)",
                chatTemplate: template, maxTokens: maxTokens, retrieve: try await retriever())
        }

        /// The search over `--index`, with the tier's embedding model; nil without `--index`.
        func retriever() async throws -> PassageRetriever? {
            guard let index else { return nil }
            let vectors = try VectorIndexFile.load(index)
            let embedder = try await host.openEmbeddingModel(model: nil, backend: nil, threads: nil)
            try VectorIndexFile.check(
                vectors, path: index, dimension: embedder.dimension, model: try host.indexModel(nil))
            let k = context
            printError("[context: up to \(k) passages of \(vectors.count) in \(index)]")
            return { text in
                let query = try await embedder.embed([text])[0]
                return try vectors.search(query, k: k, minimumScore: 0.2).map { m in
                    RetrievedPassage(
                        citation: m.entry.id + (m.entry.metadata["bytes"].map { " bytes \($0)" } ?? ""),
                        text: m.entry.text, score: m.score)
                }
            }
        }
    }

    /// One answer read by the model: each valid proposal shown with its evidence and saved when the person accepts
    /// it (`--yes` accepts all), as `model-confirmed`.
    static func answerWithModel(_ s: inout FormSession, text: String, options: ModelOptions, acceptAll: Bool)
        async throws -> [AnswerOutcome]
    {
        try await answerWithModel(
            &s, text: text, provider: try await openOrFallBack(options), options: options, acceptAll: acceptAll)
    }

    /// The model provider, or (when the model cannot be opened) one that says why so the rules provider answers.
    static func openOrFallBack(_ options: ModelOptions) async throws -> any FormAnswerProvider {
        do {
            return try await options.open()
        } catch let error as UsageError {
            throw error
        } catch {
            return UnavailableAnswerProvider(reason: "\(error)")
        }
    }

    /// The provider of a `start`/`resume` conversation with `--provider model`, opened once.
    static func conversationModel(_ options: ModelOptions?) async throws -> (any FormAnswerProvider, ModelOptions)? {
        guard let options else { return nil }
        return (try await openOrFallBack(options), options)
    }

    /// One answer read by `provider`.
    static func answerWithModel(
        _ s: inout FormSession, text: String, provider: any FormAnswerProvider, options: ModelOptions, acceptAll: Bool
    ) async throws -> [AnswerOutcome] {
        let labels = Dictionary(
            s.template.sections.flatMap(\.fields).map { ($0.id, $0.label.text(s.language)) },
            uniquingKeysWith: { a, _ in a })
        var decider = ProposalDecider(acceptAll: acceptAll)
        let result = try await respond(&s, text, provider, rulesFirst: options.rulesFirst) { p in
            print(
                "\(labels[p.fieldID] ?? p.fieldID) = \(p.value)   ← \(p.detail.components(separatedBy: ":").first ?? "")"
            )
            guard decider.accept() else { return nil }
            return FormProposal(fieldID: p.fieldID, value: p.value, source: .modelConfirmed, detail: p.detail)
        }
        for problem in result.refused { print("✗ model proposal refused: \(problem.message)") }
        if let notice = result.notice { print("note: \(notice)") }
        return result.outcomes
    }

    static func respond(
        _ s: inout FormSession, _ text: String, _ model: any FormAnswerProvider, rulesFirst: Bool,
        confirm: (FormProposal) -> FormProposal? = { $0 }
    ) async throws -> ModelTurnResult {
        rulesFirst
            ? try await s.respondRulesFirst(text, model: model, confirm: confirm)
            : try await s.respond(text, model: model, confirm: confirm)
    }

    /// `sanad form eval FILE`: field-level precision, recall and F1 of the rules provider and, with `--provider
    /// model`, of the model provider (rules after a model failure), as a Markdown table.
    static func evaluate(file: String, options: ModelOptions?, verbose: Bool) async throws -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw FormError.invalidRequest(
                "\(file): cannot be read (give the evaluation set, e.g. "
                    + "Tests/Fixtures/forms-eval/utterances.json)")
        }
        let set = try FormEvalSet.load(data, file: file)
        let catalog = try FormCatalog.bundled()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-form-eval-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func show(_ c: FormEvalSet.Case, _ saved: [String: String]) {
            guard verbose else { return }
            let got = saved.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            let want = c.expected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            printError("\(c.id): saved [\(got)] expected [\(want)]")
        }
        var rows: [(String, String, String, FormEvalScores)] = []
        let rules = try await set.score(catalog: catalog, directory: directory.appendingPathComponent("rules")) {
            s, text in
            _ = try await s.respond(text, provider: RulesAnswerProvider())
            return false
        } progress: {
            show($0, $1)
        }
        rows.append(("rules", "-", "-", rules))
        if let options {
            let provider = try await options.open()
            let parts = provider.modelName.components(separatedBy: " on ")
            let start = Date()
            let model = try await set.score(catalog: catalog, directory: directory.appendingPathComponent("model")) {
                s, text in
                try await respond(&s, text, provider, rulesFirst: options.rulesFirst).notice != nil
            } progress: {
                show($0, $1)
            }
            rows.append(
                (
                    options.rulesFirst ? "rules, then model when refused" : "model (rules on failure)",
                    parts.last ?? "", parts.first ?? "", model
                ))
            printError(
                String(
                    format: "model turns: %.1f s each",
                    Date().timeIntervalSince(start) / Double(max(1, set.cases.count))))
        }
        print(table(rows, maxTokens: options?.maxTokens))
        return ExitCode.success
    }

    static func table(_ rows: [(String, String, String, FormEvalScores)], maxTokens: Int?) -> String {
        var lines = [
            "| provider | engine | model | utterances | slice | precision | recall | F1 | fallbacks to rules |",
            "|---|---|---|---:|---|---:|---:|---:|---:|",
        ]
        for (provider, engine, model, scores) in rows {
            for (slice, s) in [
                ("all", scores.all), ("one field, the one asked", scores.oneField),
                ("several fields or another one", scores.otherwise),
            ] {
                lines.append(
                    "| \(provider) | \(engine) | \(model) | \(s.utterances) | \(slice) | "
                        + String(format: "%.2f | %.2f | %.2f", s.precision, s.recall, s.f1) + " | \(s.fallbacks) |")
            }
        }
        if let maxTokens { lines.append("\n(model replies limited to \(maxTokens) tokens, greedy decoding)") }
        return lines.joined(separator: "\n")
    }
}

/// The person's decision on each proposed field: a line `yes`, `no`, `all` or `quit` (shared by `form fill` and
/// `form answer --provider model`).
struct ProposalDecider {
    var acceptAll: Bool
    var stopped = false

    /// Whether to save the proposal just shown; asks unless `all` was chosen.
    mutating func accept() -> Bool {
        if acceptAll { return true }
        if stopped { return false }
        print("  accept? (yes / no / all / quit)")
        guard let line = readLine()?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() else {
            print("(input ended: the undecided field(s) are not saved)")
            stopped = true
            return false
        }
        if isatty(0) == 0 { print("> \(line)") }
        if ["q", "quit"].contains(line) {
            stopped = true
            return false
        }
        if ["a", "all"].contains(line) {
            acceptAll = true
            return true
        }
        guard ["y", "yes"].contains(line) else {
            print("  – not saved")
            return false
        }
        return true
    }
}
