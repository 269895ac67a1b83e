import SanadCore

/// The review of a session: every answer in the flow with its label and evidence, the problems left, the fees and
/// the checklist; and the exports made from it.
public struct FormReview: Sendable {
    public struct Entry: Sendable {
        public var stepTitle: String
        public var field: FormTemplate.Field
        public var label: String
        /// The answer as shown (an option's label, `—` when skipped); nil when not answered yet.
        public var shown: String?
        public var answer: StoredAnswer?
    }

    public struct Fee: Sendable {
        public var id: String
        public var label: String
        /// nil when the lookup entry marks the amount `"unknown"`: shown as unknown, never guessed.
        public var amount: Double?
    }

    public var title: String
    public var sessionID: String
    public var language: String
    public var complete: Bool
    public var entries: [Entry]
    public var problems: [String]
    public var fees: [Fee]
    public var currency: String?
    public var checklist: [(title: String, items: [String])]
    public var guidance: String

    /// The sum of the known amounts (`fees` may hold unknown ones: `hasUnknownFees`).
    public var feeTotal: Double { fees.reduce(0) { $0 + ($1.amount ?? 0) } }
    public var hasUnknownFees: Bool { fees.contains { $0.amount == nil } }
    /// How an unknown fact reads, in the session's language.
    public var unknownWord: String

    public init(_ s: FormSession) {
        let t = s.template
        let lang = s.language
        let flow = s.flow
        let saved = Dictionary(s.record.answers.map { ($0.fieldID, $0) }, uniquingKeysWith: { _, b in b })
        title = t.metadata.name.text(lang)
        sessionID = s.id
        language = lang
        complete = flow.current == nil
        entries = flow.steps.flatMap { vs in
            vs.fields.map { f in
                let answer = saved[f.id]
                let shown = answer.map { Self.shown($0.value, field: f, language: lang) }
                return Entry(
                    stepTitle: vs.step.title.text(lang), field: f, label: f.label.text(lang), shown: shown,
                    answer: answer)
            }
        }
        var problems: [String] = []
        for e in entries {
            guard let a = e.answer else {
                problems.append("\(e.label): " + s.validator.t("not answered yet", "لم يُجب عنه بعد", "sin responder"))
                continue
            }
            if !a.value.isEmpty, case .failure(let p) = s.check(a.value, field: e.field) {
                problems.append("\(p.message) \(p.suggestion)")
            }
        }
        problems += s.ruleProblems.map { ($0.isWarning ? "note: " : "") + $0.message }
        self.problems = problems
        let answers = flow.answers
        let lookupKey = t.metadata.lookup.flatMap { answers[$0.keyField] }
        fees = (t.review.feeInfo?.items ?? []).compactMap { item in
            guard item.when?.holds(answers) ?? true else { return nil }
            if case .lookup(let path) = item.amount, t.metadata.lookup?.isUnknown(path, key: lookupKey) == true {
                return Fee(id: item.id, label: item.label.text(lang), amount: nil)
            }
            guard let x = s.amount(item.amount, answers) else { return nil }
            return Fee(id: item.id, label: item.label.text(lang), amount: x)
        }
        currency = t.review.feeInfo?.currency
        unknownWord = s.validator.t("unknown", "غير معروف", "desconocido")
        checklist = t.review.checklists.filter { $0.when?.holds(answers) ?? true }.map { list in
            let items = list.items.flatMap { item -> [String] in
                switch item {
                case .text(let text, let when): return when?.holds(answers) ?? true ? [text.text(lang)] : []
                case .fromLookup(let path, let when):
                    guard when?.holds(answers) ?? true else { return [] }
                    if t.metadata.lookup?.isUnknown(path, key: lookupKey) == true {
                        return [
                            s.validator.t(
                                "Not in this form's data: see the official page below.",
                                "غير موجود في بيانات هذا النموذج: راجع الصفحة الرسمية أدناه.",
                                "No está en los datos de este formulario: consulte la página oficial abajo.")
                        ]
                    }
                    let v = t.metadata.lookup?.value(path, key: lookupKey)
                    return v?.arrayValue?.compactMap(\.stringValue) ?? v?.stringValue.map { [$0] } ?? []
                }
            }
            return (list.title.text(lang), items)
        }
        if let lookup = t.metadata.lookup, case let unknown = lookup.unknownFacts(key: lookupKey), !unknown.isEmpty {
            let page = lookup.value("officialUrl", key: lookupKey)?.stringValue ?? lookup.file
            checklist.append(
                (
                    s.validator.t(
                        "Not in this form's data (nobody could source it here): check \(page)",
                        "غير موجود في بيانات هذا النموذج (لم يُعثر له على مصدر): راجع \(page)",
                        "No está en los datos de este formulario (sin fuente): consulte \(page)"),
                    unknown.map { lookup.factLabels[$0]?[lang] ?? lookup.factLabels[$0]?["en"] ?? $0 }
                ))
        }
        guidance = t.review.submissionGuidance.text(lang)
    }

    /// Yes and no as the document shows them.
    static let yesNoWords: [String: (yes: String, no: String)] = [
        "en": ("Yes", "No"), "ar": ("نعم", "لا"), "es": ("Sí", "No"),
    ]

    /// An answer as the document shows it: an option's label, yes/no in the language, a state's name, `—` when
    /// skipped.
    static func shown(_ value: String, field f: FormTemplate.Field, language: String) -> String {
        if value.isEmpty { return "—" }
        switch f.type {
        case .select: return f.options.first { $0.value == value }?.label.text(language) ?? value
        case .yesNo:
            let words = yesNoWords[language] ?? yesNoWords["en"] ?? ("Yes", "No")
            return value == "yes" ? words.yes : words.no
        case .usState: return USStates.name(value, language: language).map { "\($0) (\(value))" } ?? value
        default: return value
        }
    }

    static func money(_ x: Double) -> String {
        let cents = Int((x * 100).rounded())
        return "\(cents / 100).\(cents % 100 < 10 ? "0" : "")\(cents % 100)"
    }

    // MARK: Exports

    /// The finished answers with their evidence, fees and checklist.
    public var json: JSONValue {
        var answers: [String: JSONValue] = [:]
        var evidence: [JSONValue] = []
        for e in entries {
            guard let a = e.answer else { continue }
            answers[e.field.id] = .string(a.value)
            evidence.append(
                .object([
                    "fieldId": .string(a.fieldID), "value": .string(a.value), "source": .string(a.source.rawValue),
                    "detail": .string(a.detail), "savedAt": .string(a.savedAt),
                ]))
        }
        return .object([
            "form": .string(title), "sessionId": .string(sessionID), "language": .string(language),
            "complete": .bool(complete), "answers": .object(answers), "evidence": .array(evidence),
            "problems": .array(problems.map(JSONValue.string)),
            "fees": .object([
                "currency": currency.map(JSONValue.string) ?? .null,
                "items": .array(
                    fees.map {
                        .object([
                            "id": .string($0.id), "label": .string($0.label),
                            "amount": $0.amount.map(JSONValue.number) ?? .string("unknown"),
                        ])
                    }),
                "total": .number(feeTotal),
            ]),
            "checklist": .array(
                checklist.map {
                    .object(["title": .string($0.title), "items": .array($0.items.map(JSONValue.string))])
                }),
        ])
    }

    /// The form pre-filled, in the session's language: each step's fields with their answers, then the fees and
    /// the problems left (`DocumentLines`, what the exports write).
    public var documentLines: [TextPDF.Line] { DocumentLines(self).form }

    /// What to bring and do, in the session's language: each applicable checklist, then the submission guidance.
    public var checklistLines: [TextPDF.Line] { DocumentLines(self).checklist }

    public var documentText: String { plainText(documentLines) }
    public var checklistText: String { plainText(checklistLines) }
}

/// Lines as plain text: a heading as `== heading ==`.
func plainText(_ lines: [TextPDF.Line]) -> String {
    lines.map { $0.style == .heading ? "== \($0.text) ==" : $0.text }.joined(separator: "\n") + "\n"
}
