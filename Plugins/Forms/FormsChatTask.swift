import Foundation
import SanadChat
import SanadCore

/// A form continued in the chat (`ChatTask`): a form chip opens the session (the open one of that template, if
/// any, rather than a new one) and asks its next question; typed text answers it through the same engine as
/// `sanad form resume` (checked, normalised, refused with the fix), and the form's commands work in words or with a
/// slash: back, skip, review, pause. Pausing or finishing returns the chat to normal; the resume chip continues.
extension FormsPlugin {
    /// A form command typed in the chat.
    enum ChatCommand: CaseIterable {
        case back, skip, review, pause

        /// The words that give it (after trimming and lowercasing; `/back` works like `back`).
        var words: [String] {
            switch self {
            case .back: return ["back", "رجوع", "ارجع", "السابق"]
            case .skip: return ["skip", "تخطي", "تخطى", "تخط"]
            case .review: return ["review", "مراجعة", "راجع"]
            case .pause: return ["pause", "stop", "later", "إيقاف", "توقف", "أوقف", "لاحقا", "لاحقاً"]
            }
        }

        /// The command `text` is, or nil for an answer.
        static func parse(_ text: String) -> ChatCommand? {
            var word = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if word.hasPrefix("/") { word.removeFirst() }
            return allCases.first { $0.words.contains(word) }
        }
    }

    public func beginTask(for suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> TaskReply? {
        guard suggestion.pluginID == id else { return nil }
        let session = try chatSession(for: suggestion, in: language)
        return Self.taskReply(session, lead: [])
    }

    public func continueTask(_ task: ChatTask, with text: String, in language: ChatLanguage) async throws
        -> TaskReply?
    {
        guard task.pluginID == id, let sessionID = task.state["sessionId"]?.stringValue else { return nil }
        var s = try FormSession.resume(
            id: sessionID, store: try open(), catalog: catalog, today: CivilDate.today(now()), now: now)
        let words = ChatFormWords(arabic: s.language == "ar")
        var lead: [String] = []
        switch ChatCommand.parse(text) {
        case .pause?:
            let name = s.template.metadata.name.text(s.language)
            return TaskReply(content: words.paused(name, s.progress.percent), task: nil)
        case .review?:
            lead = Self.reviewLines(FormReview(s), words)
        case .back?:
            do {
                let field = try s.back()
                lead = [words.reopened(s.template.field(field)?.label.text(s.language) ?? field)]
            } catch {
                lead = [words.nothingToGoBackTo]
            }
        case .skip?:
            lead = Self.outcomeLines([try s.skip()], s, words)
        case nil:
            lead = Self.outcomeLines(try await s.respond(text), s, words)
            if lead.isEmpty { lead = [words.notUnderstood] }
        }
        return Self.taskReply(s, lead: lead)
    }

    /// The session a form chip opens: a resume chip's, or for a start chip the newest unfinished session of that
    /// template (so tapping start again goes on where the person left off), else a new one.
    func chatSession(for suggestion: ChatSuggestion, in language: ChatLanguage) throws -> FormSession {
        let today = CivilDate.today(now())
        let store = try open()
        switch (suggestion.payload["action"]?.stringValue, suggestion.payload["sessionId"]?.stringValue) {
        case ("resume", let sessionID?):
            return try FormSession.resume(id: sessionID, store: store, catalog: catalog, today: today, now: now)
        case ("start", _):
            guard let templateID = suggestion.payload["templateId"]?.stringValue else {
                throw ToolError(tool: id, "the suggestion '\(suggestion.id)' names no templateId")
            }
            return try openOrStart(templateID, in: language)
        default:
            throw ToolError(tool: id, "the suggestion '\(suggestion.id)' has no action 'start' or 'resume'")
        }
    }

    /// The newest unfinished session of template `templateID`, else a new one in `language` (English when the
    /// template lacks it): tapping start again, in the chat or the web app, goes on where the person left off.
    public func openOrStart(_ templateID: String, in language: ChatLanguage) throws -> FormSession {
        let store = try open()
        if let open = try unfinishedSessions(store).first(where: { $0.template.metadata.id == templateID }) {
            return open
        }
        let template = try catalog.template(templateID)
        return try FormSession.start(
            template: template, store: store, language: Self.language(of: template, chat: language),
            today: CivilDate.today(now()), now: now)
    }

    /// The unfinished sessions of the store, newest first.
    func unfinishedSessions(_ store: any FormStore) throws -> [FormSession] {
        let today = CivilDate.today(now())
        return try store.sessions().sorted { $0.createdAt > $1.createdAt }.compactMap { record in
            guard
                let s = try? FormSession.resume(id: record.id, store: store, catalog: catalog, today: today, now: now),
                !s.isComplete
            else { return nil }
            return s
        }
    }

    /// `lead` (what happened to the last message), then the next question with the progress header and the
    /// commands, or the review once the form is complete (which closes the task).
    static func taskReply(_ s: FormSession, lead: [String]) -> TaskReply {
        let words = ChatFormWords(arabic: s.language == "ar")
        let name = s.template.metadata.name.text(s.language)
        guard let q = s.nextQuestion else {
            let review = reviewLines(FormReview(s), words)
            return TaskReply(content: (lead + [words.complete(name)] + review).joined(separator: "\n"), task: nil)
        }
        let p = s.progress
        var lines = lead
        lines.append("\(name) — [\(p.answered + 1)/\(p.total) \(p.percent)%] \(q.stepTitle)")
        lines.append(q.prompt)
        // The choices, unless the prompt already lists them.
        if let first = q.choices.first, !q.prompt.contains(first) {
            lines.append(q.choices.joined(separator: words.listSeparator))
        }
        lines.append(words.commands(skippable: !q.required))
        return TaskReply(
            content: lines.joined(separator: "\n"),
            task: ChatTask(pluginID: pluginID, state: .object(["sessionId": .string(s.id)])))
    }

    /// What happened to each proposed answer: saved (with the rule problems it reopened) or refused with the fix.
    static func outcomeLines(_ outcomes: [AnswerOutcome], _ s: FormSession, _ words: ChatFormWords) -> [String] {
        outcomes.flatMap { outcome -> [String] in
            switch outcome {
            case .refused(let problem): return ["✗ \(problem.message) \(problem.suggestion)"]
            case .saved(let field, let value, let reopened):
                let f = s.template.field(field)
                let label = f?.label.text(s.language) ?? field
                // A choice as its label in the session's language (`female` → `أنثى`).
                let shown = f?.options.first { $0.value == value }?.label.text(s.language) ?? value
                return ["✓ \(label): \(value.isEmpty ? words.skipped : shown)"] + reopened.map { "! \($0.message)" }
            }
        }
    }

    /// The review in a few lines: answered count, the problems left, the fees.
    static func reviewLines(_ r: FormReview, _ words: ChatFormWords) -> [String] {
        let answered = r.entries.filter { $0.answer != nil }.count
        var lines = [words.answered(answered, r.entries.count)]
        lines += r.problems.prefix(5).map { "! \($0)" }
        if r.problems.count > 5 { lines.append(words.moreProblems(r.problems.count - 5)) }
        if !r.fees.isEmpty {
            let total = r.feeTotal.rounded() == r.feeTotal ? String(Int(r.feeTotal)) : String(r.feeTotal)
            lines.append(
                words.fees(total, r.currency ?? "", unknown: r.hasUnknownFees))
        }
        return lines
    }
}

/// What the forms plugin says around a form's questions in the chat, in Arabic or English.
struct ChatFormWords {
    var arabic: Bool

    var listSeparator: String { arabic ? "، " : ", " }
    var skipped: String { arabic ? "(متروك)" : "(skipped)" }
    var nothingToGoBackTo: String {
        arabic ? "لا توجد إجابة سابقة للرجوع إليها." : "Nothing answered yet to go back to."
    }
    var notUnderstood: String {
        arabic ? "لم أجد إجابة عن السؤال في رسالتك." : "I found no answer to the question in your message."
    }

    func commands(skippable: Bool) -> String {
        let skip = skippable ? (arabic ? "، تخطي" : ", skip") : ""
        return arabic
            ? "(اكتب إجابتك، أو: رجوع\(skip)، مراجعة، إيقاف)" : "(type your answer, or: back\(skip), review, pause)"
    }

    func reopened(_ label: String) -> String { arabic ? "↩ أعدت فتح: \(label)" : "↩ Reopened: \(label)" }

    func paused(_ name: String, _ percent: Int) -> String {
        arabic
            ? "أوقفت \(name) مؤقتاً عند \(percent)%. إجاباتك محفوظة؛ اضغط «أكمل» للمتابعة متى شئت."
            : "Paused \(name) at \(percent)%. Your answers are saved; tap “Continue” to go on whenever you like."
    }

    func complete(_ name: String) -> String {
        arabic
            ? "اكتمل \(name). يمكنك تنزيل الملف (PDF وقائمة المستندات) من صفحة النماذج."
            : "\(name) is complete. Download the PDF and the checklist from the Forms page."
    }

    func answered(_ n: Int, _ total: Int) -> String {
        arabic ? "المراجعة: أُجيب عن \(n) من \(total)." : "Review: \(n) of \(total) answered."
    }

    func moreProblems(_ n: Int) -> String { arabic ? "… و\(n) ملاحظات أخرى" : "… and \(n) more" }

    func fees(_ total: String, _ currency: String, unknown: Bool) -> String {
        let rest = unknown ? (arabic ? " (وبعضها غير معروف)" : " (some unknown)") : ""
        return arabic ? "الرسوم: \(total) \(currency)\(rest)" : "Fees: \(total) \(currency)\(rest)"
    }
}
