import Foundation
import SanadCore

/// What happened to one proposed answer.
public enum AnswerOutcome: Sendable, Equatable {
    /// Saved durably (acknowledge it); `reopened` lists fields a step rule sent back to be asked again.
    case saved(field: String, value: String, reopened: [RuleProblem])
    /// Refused with a message and a suggested fix; nothing was saved.
    case refused(AnswerProblem)
}

/// A step rule that does not hold.
public struct RuleProblem: Sendable, Equatable {
    public var stepID: String
    public var field: String
    public var message: String
    public var isWarning: Bool
}

/// Progress through the flow.
public struct FormProgress: Sendable {
    public enum StepState: String, Sendable { case done, current, upcoming, notApplicable = "not-applicable" }
    public var answered: Int
    public var total: Int
    public var percent: Int
    public var steps: [(id: String, title: String, state: StepState)]
}

/// One form session: the template, the saved answers and the store. Every answer is saved before it is
/// acknowledged; the flow, progress and review are computed from the saved answers.
public struct FormSession {
    public let template: FormTemplate
    public private(set) var record: SessionRecord
    let store: any FormStore
    /// Dates limited to past or future, and ages, are taken against this day.
    public var today: CivilDate
    let now: @Sendable () -> Date

    public var id: String { record.id }
    public var language: String { record.language }

    /// Starts a new session and saves it.
    public static func start(
        template: FormTemplate, store: any FormStore, language: String, id: String? = nil, today: CivilDate,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> FormSession {
        guard template.metadata.languageSupport.contains(language) else {
            throw FormError.invalidRequest(
                "the template '\(template.metadata.id)' has no language '\(language)'; it has "
                    + template.metadata.languageSupport.joined(separator: ", "))
        }
        let sessionID = id ?? "\(template.metadata.id)-\(UUID().uuidString.prefix(8).lowercased())"
        try SessionID.validate(sessionID)
        let record = SessionRecord(
            id: sessionID, templateID: template.metadata.id, templateVersion: template.metadata.version,
            language: language, createdAt: FormStores.timestamp(now()))
        try store.create(record)
        return FormSession(template: template, record: record, store: store, today: today, now: now)
    }

    /// Opens a saved session with its template from `catalog`.
    public static func resume(
        id: String, store: any FormStore, catalog: FormCatalog, today: CivilDate,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> FormSession {
        try SessionID.validate(id)
        guard let record = try store.session(id) else { throw FormError.unknownSession(id: id, store: store.location) }
        let template = try catalog.template(record.templateID)
        return FormSession(template: template, record: record, store: store, today: today, now: now)
    }

    init(
        template: FormTemplate, record: SessionRecord, store: any FormStore, today: CivilDate,
        now: @escaping @Sendable () -> Date
    ) {
        self.template = template
        self.record = record
        self.store = store
        self.today = today
        self.now = now
    }

    /// The same session shown in `language` (read only: nothing is saved); nil when the template lacks it.
    public func shown(in language: String) -> FormSession? {
        guard template.metadata.languageSupport.contains(language) else { return nil }
        var copy = self
        copy.record.language = language
        return copy
    }

    // MARK: State

    /// Every saved answer (skipped optional fields as "").
    public var storedAnswers: [String: String] {
        Dictionary(record.answers.map { ($0.fieldID, $0.value) }, uniquingKeysWith: { _, b in b })
    }

    public var flow: FormFlow { FormFlow(template: template, answers: storedAnswers) }

    public var isComplete: Bool { flow.current == nil }

    var validator: FieldValidator { FieldValidator(today: today, language: language) }

    func question(_ field: FormTemplate.Field, step: FormTemplate.Step) -> FormQuestion {
        FormQuestion(
            stepID: step.id, stepTitle: step.title.text(language), field: field, prompt: field.aiPrompt.text(language),
            choices: field.options.enumerated().map { "\($0.offset + 1)) \($0.element.label.text(language))" },
            required: field.required)
    }

    /// The next question: the first unanswered field of the current step.
    public var nextQuestion: FormQuestion? {
        guard let c = flow.current, let field = c.pending.first else { return nil }
        return question(field, step: c.step)
    }

    /// What a provider sees now.
    public var turn: FormTurn {
        let c = flow.current
        return FormTurn(
            sessionID: id, templateID: template.metadata.id, language: language, question: nextQuestion,
            pending: c.map { cur in cur.pending.map { question($0, step: cur.step) } } ?? [], answers: flow.answers)
    }

    // MARK: Turns

    /// The person's text through `provider`, each proposal checked and saved in turn.
    public mutating func respond(_ text: String, provider: any FormAnswerProvider = RulesAnswerProvider()) async throws
        -> [AnswerOutcome]
    {
        var outcomes: [AnswerOutcome] = []
        for proposal in try await provider.proposals(for: text, turn: turn) {
            outcomes.append(try apply(proposal))
        }
        return outcomes
    }

    /// Checks `proposal` against its field and saves it; then checks the rules of every completed step (so changing
    /// an earlier answer re-checks the answers that depend on it, and reopens one that no longer holds). A field
    /// that is not in the flow for the answers so far is refused.
    public mutating func apply(_ proposal: FormProposal) throws -> AnswerOutcome {
        guard let field = template.field(proposal.fieldID) else {
            throw FormError.invalidRequest(
                "no field '\(proposal.fieldID)' in \(template.metadata.id); fields: "
                    + template.sections.flatMap(\.fields).map(\.id).joined(separator: ", "))
        }
        guard flow.fields.contains(where: { $0.id == field.id }) else {
            return .refused(
                AnswerProblem(
                    field: field.id,
                    message: "\(field.label.text(language)): "
                        + validator.t(
                            "not asked in this form for the answers given so far.",
                            "ليس مطلوباً في هذا النموذج بحسب إجاباتك حتى الآن.",
                            "no se pregunta en este formulario con las respuestas dadas."),
                    suggestion: validator.t(
                        "Answer the current question first, or change the answer that leaves it out.",
                        "أجب عن السؤال الحالي أولاً، أو غيّر الإجابة التي تستبعده.",
                        "Responda primero la pregunta actual, o cambie la respuesta que lo excluye.")))
        }
        let value: String
        switch check(proposal.value, field: field) {
        case .success(let v): value = v
        case .failure(let problem): return .refused(problem)
        }
        try save(field: field.id, value: value, source: proposal.source, detail: proposal.detail)
        return .saved(field: field.id, value: value, reopened: try enforceRules())
    }

    /// Leaves the current optional field empty.
    public mutating func skip() throws -> AnswerOutcome {
        guard let q = nextQuestion else {
            throw FormError.invalidRequest("every question is answered; nothing to skip")
        }
        guard !q.required else {
            return .refused(
                AnswerProblem(
                    field: q.field.id,
                    message: "\(q.field.label.text(language)): "
                        + validator.t("required.", "مطلوب.", "obligatorio."),
                    suggestion: validator.t(
                        "Give an answer; only optional fields can be skipped.",
                        "أجب عنه؛ لا يمكن تخطي إلا الحقول الاختيارية.",
                        "Responda; solo se pueden omitir los campos opcionales.")))
        }
        try save(field: q.field.id, value: "", source: .typed, detail: "skipped")
        return .saved(field: q.field.id, value: "", reopened: try enforceRules())
    }

    /// The normal form of `raw` for `field`, with the checks that depend on the template's lookup table.
    func check(_ raw: String, field: FormTemplate.Field) -> Result<String, AnswerProblem> {
        validator.normalize(raw, for: field).flatMap { value in
            guard let lookup = template.metadata.lookup, lookup.keyField == field.id, lookup.entries[value] == nil
            else { return .success(value) }
            return .failure(
                AnswerProblem(
                    field: field.id,
                    message: "\(field.label.text(language)): "
                        + validator.t(
                            "this form has no rules for '\(value)' yet.",
                            "لا توجد في هذا النموذج قواعد لـ '\(value)' بعد.",
                            "este formulario aún no tiene reglas para '\(value)'."),
                    suggestion: validator.t("Supported: ", "المدعوم: ", "Disponibles: ")
                        + "\(lookup.entries.keys.sorted().joined(separator: ", ")) (\(lookup.file))."))
        }
    }

    mutating func save(field: String, value: String, source: AnswerSource, detail: String) throws {
        let answer = StoredAnswer(
            fieldID: field, value: value, source: source, detail: detail, sequence: record.nextSequence,
            savedAt: FormStores.timestamp(now()))
        try store.save(answer, session: id)
        record.answers.removeAll { $0.fieldID == field }
        record.answers.append(answer)
    }

    /// Goes back: reopens the most recently answered field that is in the flow; returns its id.
    @discardableResult
    public mutating func back() throws -> String {
        let inFlow = Set(flow.fields.map(\.id))
        guard let last = record.answers.filter({ inFlow.contains($0.fieldID) }).max(by: { $0.sequence < $1.sequence })
        else { throw FormError.invalidRequest("nothing answered yet; there is no answer to go back to") }
        try reopen(last.fieldID)
        return last.fieldID
    }

    /// Reopens `field` so it is asked again (its answer is removed). Answers that depend on it are checked again by
    /// the flow and the review.
    public mutating func reopen(_ field: String) throws {
        guard template.field(field) != nil else {
            throw FormError.invalidRequest("no field '\(field)' in \(template.metadata.id)")
        }
        try store.remove(field: field, session: id)
        record.answers.removeAll { $0.fieldID == field }
    }

    // MARK: Rules

    /// The rules of every step in the flow that do not hold. A rule is checked as soon as the answers it reads are
    /// there (an age as soon as the birth date is), not when its whole step is; `{date}` in a message is the date a
    /// `validUntil` rule asks for, `{lookup:PATH}` a fact of the lookup entry.
    public var ruleProblems: [RuleProblem] {
        let f = flow
        var out: [RuleProblem] = []
        for s in f.steps {
            for rule in s.step.validationRules where !holds(rule, f.answers) {
                out.append(
                    RuleProblem(
                        stepID: s.step.id, field: rule.field, message: message(rule, f.answers),
                        isWarning: rule.isWarning))
            }
        }
        return out
    }

    /// A rule's message in the session's language with its placeholders filled.
    func message(_ rule: FormTemplate.StepRule, _ answers: [String: String]) -> String {
        var text = rule.message.text(language).replacingOccurrences(
            of: "{date}", with: required(rule, answers)?.description ?? "")
        while let open = text.range(of: "{lookup:"),
            let close = text.range(of: "}", range: open.upperBound..<text.endIndex)
        {
            let path = String(text[open.upperBound..<close.lowerBound])
            let value = template.metadata.lookup.flatMap { $0.value(path, key: answers[$0.keyField]) }
            text.replaceSubrange(
                open.lowerBound..<close.upperBound,
                with: value?.stringValue ?? value?.doubleValue.map { String(format: "%g", $0) } ?? "?")
        }
        return text
    }

    /// Reopens the field of each error rule that does not hold; returns those problems.
    mutating func enforceRules() throws -> [RuleProblem] {
        let errors = ruleProblems.filter { !$0.isWarning }
        for e in errors where storedAnswers[e.field] != nil { try reopen(e.field) }
        return errors
    }

    /// Whether `rule` holds; a rule whose answers or lookup values are missing holds (nothing to check yet).
    func holds(_ rule: FormTemplate.StepRule, _ answers: [String: String]) -> Bool {
        guard let value = answers[rule.field], !value.isEmpty else { return true }
        let fact = { (path: String) -> JSONValue? in
            self.template.metadata.lookup.flatMap { $0.value(path, key: answers[$0.keyField]) }
        }
        switch rule.kind {
        case .lookupPattern(let path):
            guard let pattern = fact(path)?.stringValue, pattern != "unknown" else { return true }
            return value.range(of: "^(?:\(pattern))$", options: .regularExpression) != nil
        case .lookupPrefixRanges(let path):
            guard let ranges = fact(path)?.arrayValue, let prefix = Int(value.prefix(3)) else { return true }
            return ranges.contains { range in
                let ends = (range.stringValue ?? "").split(separator: "-").compactMap { Int($0) }
                return ends.count == 2 && (ends[0]...max(ends[0], ends[1])).contains(prefix)
            }
        default: break
        }
        guard let date = CivilDate(iso: value) else { return true }
        switch rule.kind {
        case .lookupPattern, .lookupPrefixRanges: return true
        case .dateAfter(let other):
            guard let o = answers[other].flatMap(CivilDate.init(iso:)) else { return true }
            return date > o
        case .dateBefore(let other):
            guard let o = answers[other].flatMap(CivilDate.init(iso:)) else { return true }
            return date < o
        case .ageBetween(let min, let max):
            let age = date.years(until: today)
            if let lo = min.flatMap({ amount($0, answers) }), Double(age) < lo { return false }
            if let hi = max.flatMap({ amount($0, answers) }), Double(age) > hi { return false }
            return true
        case .validUntil(_, _, _, let exempt):
            if let exempt, let v = answers[exempt.field], exempt.list.codes.contains(v) { return true }
            guard let needed = required(rule, answers) else { return true }
            return date >= needed
        }
    }

    /// The least date a `validUntil` rule asks of its field (`from` + the days answered + the months), or nil.
    func required(_ rule: FormTemplate.StepRule, _ answers: [String: String]) -> CivilDate? {
        guard case .validUntil(let from, let plusDays, let months, _) = rule.kind,
            let start = answers[from].flatMap(CivilDate.init(iso:))
        else { return nil }
        var days = 0
        if let plusDays {
            guard let n = answers[plusDays].flatMap({ Double($0) }), n.isFinite, n >= 0, n <= 100_000 else {
                return nil
            }
            days = Int(n.rounded(.up))
        }
        return start.adding(days: days).adding(months: months)
    }

    /// A template amount: a number, or a value from the lookup entry picked by the answers.
    public func amount(_ a: FormTemplate.Amount, _ answers: [String: String]) -> Double? {
        switch a {
        case .value(let x): return x
        case .lookup(let path):
            guard let lookup = template.metadata.lookup else { return nil }
            return lookup.value(path, key: answers[lookup.keyField])?.doubleValue
        }
    }

    // MARK: Progress

    public var progress: FormProgress {
        let f = flow
        let fields = f.fields
        let answered = fields.filter { f.answers[$0.id] != nil }.count
        let visible = Dictionary(f.steps.map { ($0.step.id, $0) }, uniquingKeysWith: { a, _ in a })
        let current = f.current?.step.id
        var seenCurrent = false
        let steps = template.steps.map { step -> (id: String, title: String, state: FormProgress.StepState) in
            let state: FormProgress.StepState
            if visible[step.id] == nil {
                state = .notApplicable
            } else if step.id == current {
                state = .current
                seenCurrent = true
            } else {
                state = seenCurrent ? .upcoming : .done
            }
            return (step.id, step.title.text(language), state)
        }
        let total = fields.count
        return FormProgress(
            answered: answered, total: total, percent: total == 0 ? 100 : answered * 100 / total, steps: steps)
    }
}
