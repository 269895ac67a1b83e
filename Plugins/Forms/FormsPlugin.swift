import Foundation
import SanadChat
import SanadCore

/// Conversational forms in the chat: tools to list the templates, start a session, answer, go back and review.
/// Sessions are in the same store `sanad form` uses, so a form started in the chat can be finished from the CLI.
///
/// Options (host config): `store` (a folder; default: the plugin's data folder), `templates` (a folder of
/// `*.form.json`; default: the shipped templates), `keepBackups` (automatic backups kept, as `sanad form
/// --keep-backups`; 0 turns them off; default 7), `offer` (which templates the chat offers, and to whom: `FormOffer`;
/// default: all).
public final class FormsPlugin: FeaturePlugin {
    public static let pluginID = "forms"
    public static let optionKeys = ["store", "templates", "keepBackups", "offer"]

    public let id = FormsPlugin.pluginID
    public let storeDirectory: URL
    public let catalog: FormCatalog
    let now: @Sendable () -> Date
    let autoBackup: AutoBackupPolicy
    /// The `offer` option read against the person's data; nil: every template.
    let offers: [FormOffer]?

    public init(context: PluginContext) throws {
        let options = try PluginOptions(plugin: Self.pluginID, context: context, allowed: Self.optionKeys)
        func folder(_ key: String) throws -> URL? {
            try options.string(key).map { path in
                guard !path.hasPrefix("/"), let config = context.configFile else { return URL(fileURLWithPath: path) }
                return config.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
            }
        }
        storeDirectory = try folder("store") ?? context.dataDirectory
        catalog = try folder("templates").map { try FormCatalog(directory: $0) } ?? FormCatalog.bundled()
        now = context.now
        let keep = try options.int("keepBackups", range: 0...1000) ?? AutoBackupPolicy.standard.keep
        autoBackup = AutoBackupPolicy(enabled: keep > 0, keep: keep)
        offers = try FormOffer.read(options, catalog: catalog)
    }

    public init(
        storeDirectory: URL, catalog: FormCatalog, now: @escaping @Sendable () -> Date = { Date() },
        autoBackup: AutoBackupPolicy = .standard
    ) {
        self.storeDirectory = storeDirectory
        self.catalog = catalog
        self.now = now
        self.autoBackup = autoBackup
        self.offers = nil
    }

    public var tools: [any Tool] { [listTool, startTool, answerTool, backTool, reviewTool] }

    /// The store, backing itself up as `autoBackup` says (a failed backup is noted on standard error; the answer
    /// stays saved).
    func open() throws -> any FormStore {
        let store = try FormStores.open(directory: storeDirectory).store
        guard autoBackup.enabled else { return store }
        return AutoBackupStore(
            store, storeDirectory: storeDirectory, catalog: catalog, policy: autoBackup, now: now,
            report: { FileHandle.standardError.write(Data("[forms: \($0)]\n".utf8)) })
    }

    /// The store folder's backup key (`backup.key`), made on first use.
    func backupKey() throws -> BackupKey { try BackupKey.ofStore(storeDirectory) }

    func session(_ args: ToolArguments) throws -> FormSession {
        try FormSession.resume(
            id: try args.string("sessionId"), store: try open(), catalog: catalog, today: CivilDate.today(now()),
            now: now)
    }

    var listTool: PluginTool {
        PluginTool(name: "list_forms", description: "Lists the form templates and the saved form sessions.") {
            [self] _ in
            let sessions = try open().sessions()
            return .object([
                "templates": .array(
                    catalog.templates.map {
                        .object([
                            "id": .string($0.metadata.id), "name": .string($0.metadata.name.text("en")),
                            "version": .string($0.metadata.version),
                            "languages": .array($0.metadata.languageSupport.map(JSONValue.string)),
                        ])
                    }),
                "sessions": .array(
                    sessions.map {
                        .object([
                            "sessionId": .string($0.id), "templateId": .string($0.templateID),
                            "answers": .number(Double($0.answers.count)),
                        ])
                    }),
            ])
        }
    }

    var startTool: PluginTool {
        PluginTool(
            name: "start_form", description: "Starts a form session and returns its id and the first question.",
            arguments: [ToolArgument("templateId", required: true), ToolArgument("language")]
        ) { [self] args in
            let template = try catalog.template(try args.string("templateId"))
            let s = try FormSession.start(
                template: template, store: try open(), language: try args.optionalString("language") ?? "en",
                today: CivilDate.today(now()), now: now)
            return s.stateJSON
        }
    }

    var answerTool: PluginTool {
        PluginTool(
            name: "answer_form",
            description:
                "Answers the current question of a form session (or the field fieldId); the answer is saved before the reply.",
            arguments: [
                ToolArgument("sessionId", required: true), ToolArgument("answer", required: true),
                ToolArgument("fieldId"),
            ]
        ) { [self] args in
            var s = try session(args)
            let text = try args.string("answer")
            let outcomes: [AnswerOutcome]
            if let field = try args.optionalString("fieldId") {
                outcomes = [try s.apply(FormProposal(fieldID: field, value: text))]
            } else {
                outcomes = try await s.respond(text)
            }
            guard case .object(var state) = s.stateJSON else { return s.stateJSON }
            state["outcomes"] = .array(outcomes.map(\.json))
            return .object(state)
        }
    }

    var backTool: PluginTool {
        PluginTool(
            name: "form_back", description: "Reopens the last answer of a form session so it is asked again.",
            arguments: [ToolArgument("sessionId", required: true)]
        ) { [self] args in
            var s = try session(args)
            let field = try s.back()
            guard case .object(var state) = s.stateJSON else { return s.stateJSON }
            state["reopened"] = .string(field)
            return .object(state)
        }
    }

    var reviewTool: PluginTool {
        PluginTool(
            name: "form_review",
            description: "Returns a form session's answers with evidence, problems, fees and checklist.",
            arguments: [ToolArgument("sessionId", required: true)]
        ) { [self] args in
            FormReview(try session(args)).json
        }
    }
}
