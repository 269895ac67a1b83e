import FormsPlugin
import Foundation
import OCRIngestPlugin
import SanadCommandLine
import SanadCore
import SanadHost

/// The options every `sanad form` verb takes: `--store DIR`, the clock (`--now`) and the automatic backups
/// (`--keep-backups N`, `--no-auto-backup`), and what they open; `--json` for the verbs that print JSON.
struct FormContext {
    let directory: URL
    let clock: @Sendable () -> Date
    let catalog: FormCatalog
    let json: Bool
    let autoBackup: AutoBackupPolicy

    init(parsing arguments: inout Arguments, json takesJSON: Bool = false) throws {
        json = takesJSON && arguments.flag("--json")
        let option = try arguments.option("--store")
        directory = try option.map { URL(fileURLWithPath: $0) } ?? PluginHost.dataDirectory(for: FormsPlugin.pluginID)
        clock = try PluginHost.clock(&arguments)
        catalog = try FormCatalog.bundled()
        let off = arguments.flag("--no-auto-backup")
        let keep = try arguments.int("--keep-backups", range: 1...1000)
        if off && keep != nil { throw UsageError("'--keep-backups' and '--no-auto-backup' exclude each other") }
        autoBackup = AutoBackupPolicy(enabled: !off, keep: keep ?? AutoBackupPolicy.standard.keep)
    }

    var today: CivilDate { CivilDate.today(clock()) }

    /// The session store (SQLite, else the JSON file, with a note saying why), backing itself up after answers as
    /// `autoBackup` says (notes on standard error).
    func openStore() throws -> any FormStore {
        let opened = try FormStores.open(directory: directory)
        if let note = opened.note { printError("[\(note)]") }
        guard autoBackup.enabled else { return opened.store }
        return AutoBackupStore(
            opened.store, storeDirectory: directory, catalog: catalog, policy: autoBackup,
            now: clock, report: { printError("[\($0)]") })
    }

    /// The store folder's backup key, made on first use.
    func backupKey() throws -> BackupKey { try BackupKey.ofStore(directory) }

    /// The saved session `id`.
    func resume(_ id: String, store: (any FormStore)? = nil) throws -> FormSession {
        try FormSession.resume(id: id, store: try store ?? openStore(), catalog: catalog, today: today, now: clock)
    }
}

/// The shared options, `SESSION` and the positionals after it (`more`) of a verb that works on a saved session, and
/// `--json` where the verb prints the session as JSON.
struct SessionArguments {
    let context: FormContext
    let id: String
    let more: [String]
    var json: Bool { context.json }

    init(parsing arguments: inout Arguments, more names: [String] = [], json takesJSON: Bool = false) throws {
        context = try FormContext(parsing: &arguments, json: takesJSON)
        let all = ["SESSION"] + names
        let values = try arguments.positionals(min: all.count, max: all.count, names: all.joined(separator: " and "))
        (id, more) = (values[0], Array(values.dropFirst()))
    }

    /// The session, read from the store.
    func resume() throws -> FormSession { try context.resume(id) }
}

/// `--provider` and the model options it brings, for the verbs that read answers.
struct AnswerProviderOptions {
    let model: FormCommand.ModelOptions?
    /// `--yes`: accept every proposal of the model (only with a model provider).
    let acceptAll: Bool

    init(parsing arguments: inout Arguments) throws {
        let provider = try arguments.option("--provider")
        acceptAll = arguments.flag("--yes")
        model = try FormCommand.ModelOptions.parse(&arguments, provider: provider)
        if acceptAll && model == nil { throw UsageError("'--yes' needs --provider model or rules-then-model") }
    }
}

extension FormCommand {
    /// `list`: the bundled templates.
    struct List: CommandVerb {
        static let name = "list"
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            context = try FormContext(parsing: &arguments, json: true)
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            let templates = context.catalog.templates
            if context.json {
                print(
                    JSONValue.array(
                        templates.map {
                            .object([
                                "id": .string($0.metadata.id), "name": .string($0.metadata.name.text("en")),
                                "version": .string($0.metadata.version),
                                "languages": .array($0.metadata.languageSupport.map(JSONValue.string)),
                            ])
                        }
                    ).prettyString)
            } else {
                for t in templates {
                    print(
                        "\(t.metadata.id.padding(toLength: 14, withPad: " ", startingAt: 0)) \(t.metadata.name.text("en"))"
                            + "  (v\(t.metadata.version); \(t.metadata.languageSupport.joined(separator: ", ")))")
                }
            }
            return ExitCode.success
        }
    }

    /// `sessions`: the saved sessions and their progress.
    struct Sessions: CommandVerb {
        static let name = "sessions"
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            context = try FormContext(parsing: &arguments, json: true)
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            let store = try context.openStore()
            let sessions = try store.sessions().map { try context.resume($0.id, store: store) }
            if context.json {
                print(JSONValue.array(sessions.map(\.stateJSON)).prettyString)
            } else {
                print("store: \(store.location)")
                for s in sessions {
                    print(
                        "\(TerminalText.escaped(s.id))  \(s.template.metadata.id)  \(s.language)  \(s.progress.percent)%\(s.isComplete ? " complete" : "")"
                    )
                }
            }
            return ExitCode.success
        }
    }

    /// `start TEMPLATE`: a new session, then the questions one at a time from standard input.
    struct Start: CommandVerb {
        static let name = "start"
        let template: FormTemplate
        let language: String
        let id: String?
        let provider: AnswerProviderOptions
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            let language = try arguments.option("--lang") ?? "en"
            id = try arguments.option("--id")
            provider = try AnswerProviderOptions(parsing: &arguments)
            context = try FormContext(parsing: &arguments, json: true)
            let name = try arguments.positionals(min: 1, max: 1, names: "TEMPLATE (see 'sanad form list')")[0]
            do { template = try context.catalog.template(name) } catch { throw UsageError("\(error)") }
            guard template.metadata.languageSupport.contains(language) else {
                throw UsageError(
                    "--lang '\(language)': \(name) supports \(template.metadata.languageSupport.joined(separator: ", "))"
                )
            }
            self.language = language
        }

        func run() async throws -> Int32 {
            var s = try FormSession.start(
                template: template, store: try context.openStore(), language: language, id: id, today: context.today,
                now: context.clock)
            print("session \(s.id) started (\(template.metadata.name.text(language)))")
            return try await converse(
                &s, json: context.json, model: try await conversationModel(provider.model),
                acceptAll: provider.acceptAll)
        }
    }

    /// `resume SESSION`: the questions of a saved session, from where it stopped.
    struct Resume: CommandVerb {
        static let name = "resume"
        let provider: AnswerProviderOptions
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws {
            provider = try AnswerProviderOptions(parsing: &arguments)
            session = try SessionArguments(parsing: &arguments, json: true)
        }

        func run() async throws -> Int32 {
            var s = try session.resume()
            return try await converse(
                &s, json: session.json, model: try await conversationModel(provider.model),
                acceptAll: provider.acceptAll)
        }
    }

    /// `answer SESSION TEXT`: one answer, to the current question or `--field`, then the next question.
    struct Answer: CommandVerb {
        static let name = "answer"
        let field: String?
        let provider: AnswerProviderOptions
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws {
            field = try arguments.option("--field")
            provider = try AnswerProviderOptions(parsing: &arguments)
            if field != nil && provider.model != nil {
                throw UsageError("--field and --provider model exclude each other")
            }
            session = try SessionArguments(parsing: &arguments, more: ["TEXT"], json: true)
        }

        func run() async throws -> Int32 {
            var s = try session.resume()
            let text = session.more[0]
            let outcomes: [AnswerOutcome]
            if let field {
                outcomes = [try s.apply(FormProposal(fieldID: field, value: text))]
            } else if let model = provider.model {
                guard s.nextQuestion != nil else { throw FormError.invalidRequest("session \(s.id) is complete") }
                outcomes = try await answerWithModel(&s, text: text, options: model, acceptAll: provider.acceptAll)
            } else {
                guard s.nextQuestion != nil else {
                    throw FormError.invalidRequest("session \(s.id) is complete; use --field to change an answer")
                }
                outcomes = try await s.respond(text)
            }
            if session.json {
                guard case .object(var state) = s.stateJSON else { return ExitCode.failure }
                state["outcomes"] = .array(outcomes.map(\.json))
                print(JSONValue.object(state).prettyString)
            } else {
                for o in outcomes { print(describe(o)) }
                print(s.nextQuestion.map { ask($0, s) } ?? "Form complete.")
            }
            return outcomes.contains { if case .refused = $0 { return true } else { return false } }
                ? ExitCode.failure : ExitCode.success
        }
    }

    /// `eval FILE`: precision, recall and F1 of the providers on an evaluation set.
    struct Eval: CommandVerb {
        static let name = "eval"
        let file: String
        let model: ModelOptions?
        let verbose: Bool

        init(parsing arguments: inout Arguments) throws {
            verbose = arguments.flag("--verbose")
            model = try ModelOptions.parse(&arguments, provider: try arguments.option("--provider"))
            _ = try FormContext(parsing: &arguments)
            file = try arguments.positionals(min: 1, max: 1, names: "FILE (the evaluation set)")[0]
        }

        func run() async throws -> Int32 { try await evaluate(file: file, options: model, verbose: verbose) }
    }

    /// `back SESSION`: reopens the last answer.
    struct Back: CommandVerb {
        static let name = "back"
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws { session = try SessionArguments(parsing: &arguments) }

        func run() async throws -> Int32 {
            var s = try session.resume()
            print("reopened \(try s.back())")
            if let q = s.nextQuestion { print(ask(q, s)) }
            return ExitCode.success
        }
    }

    /// `review SESSION`: the answers, the fees and the checklist.
    struct Review: CommandVerb {
        static let name = "review"
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws {
            session = try SessionArguments(parsing: &arguments, json: true)
        }

        func run() async throws -> Int32 {
            let review = FormReview(try session.resume())
            print(
                session.json ? review.json.prettyString : review.documentText + "\n" + review.checklistText,
                terminator: "")
            return ExitCode.success
        }
    }

    /// `fill SESSION FILE|-`: the fields a document proposes, each accepted or declined.
    struct Fill: CommandVerb {
        static let name = "fill"
        let kind: DocumentKind
        let ocrLanguage: String
        let acceptAll: Bool
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws {
            acceptAll = arguments.flag("--yes")
            let kindText = try arguments.option("--kind") ?? "auto"
            guard let kind = DocumentKind(rawValue: kindText), kind != .text else {
                throw UsageError("--kind '\(kindText)' is not one of auto, mrz, aamva")
            }
            self.kind = kind
            ocrLanguage = try arguments.option("--ocr-lang") ?? DocumentIngestPlugin.defaultLanguage
            session = try SessionArguments(parsing: &arguments, more: ["FILE (or '-' for standard input)"])
        }

        func run() async throws -> Int32 {
            var s = try session.resume()
            return try fill(
                &s, file: session.more[0], kind: kind, ocrLanguage: ocrLanguage, acceptAll: acceptAll,
                clock: session.context.clock)
        }
    }

    /// `export SESSION --out DIR`: the answers, the pre-filled form, the checklist and reminders.
    struct Export: CommandVerb {
        static let name = "export"
        let directory: URL
        let session: SessionArguments

        init(parsing arguments: inout Arguments) throws {
            let out = try arguments.option("--out")
            session = try SessionArguments(parsing: &arguments)
            guard let out else { throw UsageError("missing --out DIR") }
            directory = URL(fileURLWithPath: out)
        }

        func run() async throws -> Int32 {
            let s = try session.resume()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let documents = FormDocuments(s)
            for (name, bytes) in documents.files {
                try writeExport(Data(bytes), to: directory.appendingPathComponent(name))
            }
            for note in documents.notes { printError("note: \(note)") }
            print(
                "wrote \(documents.files.map { directory.appendingPathComponent($0.name).path }.joined(separator: ", "))"
            )
            if !s.isComplete {
                printError("note: session \(s.id) is not complete; the export shows what is missing")
            }
            return ExitCode.success
        }
    }

    /// `backup SESSION|--all FILE`: a ZIP archive of sessions, documents and templates with a manifest.
    struct Backup: CommandVerb {
        static let name = "backup"
        let id: String?
        let file: String
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            let all = arguments.flag("--all")
            context = try FormContext(parsing: &arguments)
            if all {
                id = nil
                file = try arguments.positionals(min: 1, max: 1, names: "FILE")[0]
            } else {
                let a = try arguments.positionals(min: 2, max: 2, names: "SESSION (or --all) and FILE")
                (id, file) = (a[0], a[1])
            }
        }

        func run() async throws -> Int32 {
            let store = try context.openStore()
            let records = try id.map { [try context.resume($0, store: store).record] } ?? store.sessions()
            let archive = try FormsArchive.make(
                records, catalog: context.catalog, store: store, today: context.today, now: context.clock(),
                key: try context.backupKey())
            try writeExport(Data(archive), to: URL(fileURLWithPath: file))
            print(
                "backed up \(records.count) session(s) (\(records.map(\.answers.count).reduce(0, +)) answers): "
                    + "\(records.map(\.id).joined(separator: ", ")) to \(file)")
            return ExitCode.success
        }
    }

    /// `restore FILE`: a backup checked whole before anything is written, merged per session (the newer version
    /// wins unless `--replace`), with the store copied aside first.
    struct Restore: CommandVerb {
        static let name = "restore"
        let file: String
        let dryRun: Bool
        let replacing: Bool
        let allowUnkeyed: Bool
        let keyFiles: [String]
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            dryRun = arguments.flag("--dry-run")
            replacing = arguments.flag("--replace")
            allowUnkeyed = arguments.flag("--allow-unkeyed")
            var keys: [String] = []
            while let k = try arguments.option("--key") { keys.append(k) }
            keyFiles = keys
            context = try FormContext(parsing: &arguments)
            file = try arguments.positionals(min: 1, max: 1, names: "FILE")[0]
        }

        func run() async throws -> Int32 {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw FormError.invalidBackup(file: file, problem: "cannot be read")
            }
            let restore = FormsRestore(
                store: try context.openStore(), directory: context.directory, catalog: context.catalog,
                today: context.today, key: try context.backupKey())
            let plan = try restore.plan(
                Array(data), file: file,
                otherKeys: try keyFiles.map { try BackupKey.load(file: URL(fileURLWithPath: $0)) },
                allowUnkeyed: allowUnkeyed)
            let decisions = plan.sessions.map { ($0, $0.decision(replacing: replacing)) }
            guard !dryRun else {
                for (p, decision) in decisions {
                    print("would restore \(p.summary): \(decision.explanation)")
                    for answer in p.record.answers {
                        print("  \(TerminalText.escaped(answer.fieldID)) = \(TerminalText.escaped(answer.value))")
                    }
                }
                for f in plan.files where !f.path.hasPrefix("sessions/") {
                    print("  (in the archive: \(f.path), \(f.bytes) bytes)")
                }
                return ExitCode.success
            }
            let (aside, restored) = try restore.apply(plan, replacing: replacing, now: context.clock())
            if let aside {
                print(
                    "the store as it was (\(aside.sessions) session(s)) is kept in \(aside.url.path); "
                        + "'sanad form restore \(aside.url.path) --replace' puts it back")
            }
            for (id, decision) in restored {
                let summary = plan.sessions.first { $0.record.id == id }?.summary ?? "session \(id)"
                print("\(decision.writes ? "restored" : "not restored") \(summary): \(decision.explanation)")
            }
            return ExitCode.success
        }
    }

    /// `backups`: the automatic backups and the copies made before restores, newest last.
    struct Backups: CommandVerb {
        static let name = "backups"
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            context = try FormContext(parsing: &arguments, json: true)
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            let backups = FormBackups(storeDirectory: context.directory)
            let entries = backups.list()
            if context.json {
                print(
                    JSONValue.object([
                        "directory": .string(backups.directory.path),
                        "backups": .array(
                            entries.map {
                                .object([
                                    "file": .string($0.url.path), "kind": .string($0.kind.rawValue),
                                    "made": .string(FormStores.timestamp($0.made)), "bytes": .number(Double($0.bytes)),
                                ])
                            }),
                    ]).prettyString)
                return ExitCode.success
            }
            if entries.isEmpty {
                print("no backups in \(backups.directory.path) yet (one is made after each completed form)")
            }
            for e in entries {
                print("\(FormStores.timestamp(e.made))  \(e.kind.rawValue)  \(e.bytes) bytes  \(e.url.path)")
            }
            return ExitCode.success
        }
    }

    /// `privacy`: what is kept on this device; `--export FILE`, `--wipe`.
    struct Privacy: CommandVerb {
        static let name = "privacy"
        let export: String?
        let wipe: Bool
        let yes: Bool
        let context: FormContext

        init(parsing arguments: inout Arguments) throws {
            export = try arguments.option("--export")
            wipe = arguments.flag("--wipe")
            yes = arguments.flag("--yes")
            if yes && !wipe { throw UsageError("'--yes' applies to 'privacy --wipe'") }
            context = try FormContext(parsing: &arguments, json: true)
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            try privacy(
                store: try context.openStore(), directory: context.directory, catalog: context.catalog,
                today: context.today, now: context.clock(), json: context.json, export: export, wipe: wipe, yes: yes,
                key: context.backupKey)
        }
    }
}
