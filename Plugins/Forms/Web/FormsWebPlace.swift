import Foundation
import SanadChat
import SanadCore

/// The forms' place in the web app (`sanad serve`, at `/forms`): the page (`Resources/Web/forms.html`) and its JSON
/// calls, each a `FormSession` call on the plugin's store, as `sanad form` makes them:
///
///     GET  /forms                          the page
///     GET  /forms/api/list?lang=ar         the templates offered and the sessions with their progress
///     POST /forms/api/start   {"templateId", "lang"}     opens the unfinished session of that form, else starts one
///     GET  /forms/api/session?id=ID        the session: progress, steps, the next question
///     POST /forms/api/answer  {"id", "answer"}           checks and saves; a refusal comes back with its fix
///     POST /forms/api/skip    {"id"}  ·  /back {"id"}  ·  /change {"id", "fieldId"}
///     GET  /forms/api/review?id=ID         answers with their labels, problems, fees, the files to download
///     GET  /forms/api/export?id=ID&file=form.pdf         one export file (FormDocuments), as a download
///     GET  /forms/api/fields?id=ID        every field of the session's form: id, label, the saved answer
///     POST /forms/api/propose {"id", "fieldId", "value", "evidence": {"documentId", "documentKind",
///                              "sourceField", "repairs"}}   a value read from a document (the Documents place),
///                                          checked like a typed answer, saved with the document as its evidence
///     GET  /forms/api/backup               every session as a backup archive (`sanad form backup --all`)
///     POST /forms/api/restore {"archive": BASE64, "name", "apply", "replace"}   the backup checked and planned
///                                          (`apply` false: `--dry-run`), or restored (`FormsRestore`)
struct FormsWebPlace: WebPlace {
    let plugin: FormsPlugin
    let prefix = "/forms"

    func respond(to request: WebRequest) async throws -> WebReply {
        let route = String(request.path.dropFirst(prefix.count))
        if route == "" || route == "/" {
            guard let page = Self.page else {
                throw FormError.invalidRequest(
                    "the forms page (Resources/Web/forms.html) is not shipped; rebuild sanad")
            }
            return .html(page)
        }
        let body = request.method == "POST" ? try JSONValue.parse(Data(request.body)) : .object([:])
        func parameter(_ name: String) throws -> String {
            guard let value = request.query[name] ?? body[name]?.stringValue, !value.isEmpty else {
                throw FormError.invalidRequest("\(request.path) needs '\(name)'")
            }
            return value
        }
        let language = ChatLanguage(code: request.query["lang"] ?? body["lang"]?.stringValue ?? "ar") ?? .arabic
        switch (request.method, route) {
        case ("GET", "/api/list"): return .json(try list(language))
        case ("POST", "/api/start"):
            return .json(Self.state(try plugin.openOrStart(try parameter("templateId"), in: language)))
        case ("GET", "/api/session"): return .json(Self.state(try session(try parameter("id"))))
        case ("POST", "/api/answer"):
            var s = try session(try parameter("id"))
            let outcomes = try await s.respond(try parameter("answer"))
            return .json(Self.state(s, outcomes: outcomes))
        case ("POST", "/api/skip"):
            var s = try session(try parameter("id"))
            let outcome = try s.skip()
            return .json(Self.state(s, outcomes: [outcome]))
        case ("POST", "/api/back"):
            var s = try session(try parameter("id"))
            try s.back()
            return .json(Self.state(s))
        case ("POST", "/api/change"):
            var s = try session(try parameter("id"))
            try s.reopen(try parameter("fieldId"))
            return .json(Self.state(s))
        case ("GET", "/api/review"): return .json(Self.review(try session(try parameter("id"))))
        case ("GET", "/api/export"):
            let s = try session(try parameter("id"))
            let name = try parameter("file")
            guard let file = FormDocuments(s).files.first(where: { $0.name == name }) else {
                throw FormError.invalidRequest("no export file '\(name)' for \(s.id)")
            }
            return WebReply(contentType: Self.contentType(name), body: file.bytes, fileName: "\(s.id)-\(name)")
        case ("GET", "/api/fields"): return .json(Self.fields(try session(try parameter("id"))))
        case ("POST", "/api/propose"):
            var s = try session(try parameter("id"))
            let evidence = body["evidence"] ?? .object([:])
            let outcome = try s.apply(
                .fromDocument(
                    fieldID: try parameter("fieldId"), value: try parameter("value"),
                    documentID: evidence["documentId"]?.stringValue ?? "document",
                    documentKind: evidence["documentKind"]?.stringValue ?? "document",
                    sourceField: evidence["sourceField"]?.stringValue ?? "",
                    repairs: evidence["repairs"]?.arrayValue?.compactMap(\.stringValue) ?? []))
            return .json(Self.state(s, outcomes: [outcome]))
        case ("GET", "/api/backup"): return try backup()
        case ("POST", "/api/restore"): return .json(try restore(body))
        default:
            throw FormError.invalidRequest(
                "no call \(request.method) \(request.path); see Plugins/Forms/README.md (the web app)")
        }
    }

    func session(_ id: String) throws -> FormSession {
        try FormSession.resume(
            id: id, store: try plugin.open(), catalog: plugin.catalog, today: CivilDate.today(plugin.now()),
            now: plugin.now)
    }

    /// Every session as one archive (`sanad form backup --all`), digested with the store's key.
    func backup() throws -> WebReply {
        let store = try plugin.open()
        let records = try store.sessions()
        guard !records.isEmpty else { throw FormError.invalidRequest("there are no forms to back up yet") }
        let now = plugin.now()
        let archive = try FormsArchive.make(
            records, catalog: plugin.catalog, store: store, today: CivilDate.today(now), now: now,
            key: try plugin.backupKey())
        return WebReply(
            contentType: "application/zip", body: archive, fileName: "sanad-forms-\(CivilDate.today(now)).zip")
    }

    /// A restore of the uploaded backup (`archive`, base64; `name`, the file's name for errors) as
    /// `sanad form restore` makes it, trusting the store's own key: its plan when `apply` is false, else what was
    /// restored (`replace`: `--replace`) and where the store as it was is kept.
    func restore(_ body: JSONValue) throws -> JSONValue {
        let name = body["name"]?.stringValue ?? "the uploaded file"
        guard let text = body["archive"]?.stringValue, let data = Data(base64Encoded: text) else {
            throw FormError.invalidRequest("/forms/api/restore needs 'archive': the backup file's bytes in base64")
        }
        let replacing = body["replace"]?.boolValue ?? false
        let restore = FormsRestore(
            store: try plugin.open(), directory: plugin.storeDirectory, catalog: plugin.catalog,
            today: CivilDate.today(plugin.now()), key: try plugin.backupKey())
        let plan = try restore.plan(Array(data), file: name)
        func session(_ p: SessionBackup.Plan, _ decision: RestoreDecision) -> JSONValue {
            .object([
                "id": .string(p.record.id), "summary": .string(p.summary), "writes": .bool(decision.writes),
                "explanation": .string(decision.explanation), "answers": .number(Double(p.record.answers.count)),
            ])
        }
        guard body["apply"]?.boolValue == true else {
            return .object([
                "applied": .bool(false),
                "sessions": .array(plan.sessions.map { session($0, $0.decision(replacing: replacing)) }),
            ])
        }
        let (aside, decisions) = try restore.apply(plan, replacing: replacing, now: plugin.now())
        return .object([
            "applied": .bool(true),
            "sessions": .array(
                decisions.compactMap { d in plan.sessions.first { $0.record.id == d.id }.map { session($0, d.decision) }
                }),
            "aside": aside.map { .string($0.url.lastPathComponent) } ?? .null,
        ])
    }

    /// The templates offered (names in `language`) and every session, newest first, with its progress.
    func list(_ language: ChatLanguage) throws -> JSONValue {
        let store = try plugin.open()
        let today = CivilDate.today(plugin.now())
        let sessions = try store.sessions().sorted { $0.createdAt > $1.createdAt }.compactMap { record -> JSONValue? in
            guard
                let s = try? FormSession.resume(
                    id: record.id, store: store, catalog: plugin.catalog, today: today, now: plugin.now)
            else { return nil }
            return .object([
                "id": .string(s.id), "templateId": .string(s.template.metadata.id),
                "name": .string(s.template.metadata.name.text(s.language)), "language": .string(s.language),
                "percent": .number(Double(s.progress.percent)), "complete": .bool(s.isComplete),
                "createdAt": .string(record.createdAt),
            ])
        }
        return .object([
            "templates": .array(
                plugin.offeredTemplates.map {
                    .object([
                        "id": .string($0.metadata.id),
                        "name": .string($0.metadata.name.text(FormsPlugin.language(of: $0, chat: language))),
                    ])
                }),
            "sessions": .array(sessions),
        ])
    }

    /// The session's state (`stateJSON`) with its form's name, its direction and what became of the last answers.
    static func state(_ s: FormSession, outcomes: [AnswerOutcome] = []) -> JSONValue {
        guard case .object(var state) = s.stateJSON else { return s.stateJSON }
        state["name"] = .string(s.template.metadata.name.text(s.language))
        state["dir"] = .string(s.language == "ar" ? "rtl" : "ltr")
        state["outcomes"] = .array(outcomes.map(\.json))
        state["canGoBack"] = .bool(!s.storedAnswers.isEmpty)
        if let q = s.nextQuestion {
            state["label"] = .string(q.field.label.text(s.language))
            state["options"] = .array(
                q.field.options.map {
                    .object(["value": .string($0.value), "label": .string($0.label.text(s.language))])
                })
        }
        return .object(state)
    }

    /// Every field of the session's form with its label (in the session's language) and saved answer, and the form's
    /// name: what the Documents place shows beside each proposal.
    static func fields(_ s: FormSession) -> JSONValue {
        .object([
            "sessionId": .string(s.id), "name": .string(s.template.metadata.name.text(s.language)),
            "dir": .string(s.language == "ar" ? "rtl" : "ltr"),
            "fields": .array(
                s.template.sections.flatMap(\.fields).map { field in
                    .object([
                        "id": .string(field.id), "label": .string(field.label.text(s.language)),
                        "saved": s.storedAnswers[field.id].map(JSONValue.string) ?? .null,
                    ])
                }),
        ])
    }

    /// The review as the page shows it: each answer with its label (a choice by its label), the problems, the fees
    /// and the files the export makes.
    static func review(_ s: FormSession) -> JSONValue {
        let r = FormReview(s)
        let documents = FormDocuments(s)
        return .object([
            "sessionId": .string(s.id), "name": .string(r.title), "complete": .bool(r.complete),
            "dir": .string(s.language == "ar" ? "rtl" : "ltr"),
            "entries": .array(
                r.entries.map {
                    .object([
                        "fieldId": .string($0.field.id), "step": .string($0.stepTitle), "label": .string($0.label),
                        "shown": $0.shown.map(JSONValue.string) ?? .null,
                    ])
                }),
            "problems": .array(r.problems.map(JSONValue.string)),
            "fees": .array(
                r.fees.map {
                    .object([
                        "label": .string($0.label),
                        "amount": $0.amount.map(JSONValue.number) ?? .string(r.unknownWord),
                    ])
                }),
            "feeTotal": .number(r.feeTotal), "currency": r.currency.map(JSONValue.string) ?? .null,
            "files": .array(documents.files.map { .string($0.name) }),
            "notes": .array(documents.notes.map(JSONValue.string)),
        ])
    }

    static func contentType(_ name: String) -> String {
        switch URL(fileURLWithPath: name).pathExtension {
        case "pdf": return "application/pdf"
        case "json": return "application/json"
        case "ics": return "text/calendar; charset=utf-8"
        default: return "text/plain; charset=utf-8"
        }
    }

    /// The page, next to the shipped templates (`Resources/Web/forms.html`).
    static let page: String? = {
        guard let templates = FormCatalog.bundledDirectory else { return nil }
        let url = templates.deletingLastPathComponent().appendingPathComponent("Web/forms.html")
        return try? String(contentsOf: url, encoding: .utf8)
    }()
}

extension FormsPlugin {
    public var webPlace: (any WebPlace)? { FormsWebPlace(plugin: self) }
}
