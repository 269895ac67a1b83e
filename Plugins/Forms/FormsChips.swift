import Foundation
import SanadChat
import SanadCore

/// The forms plugin's chips in the chat (Arabic or English): resume each unfinished session, start each template. Tapping one
/// starts or opens the session and replies with its next question and how to continue (`sanad form resume ID`):
/// the chat does not route typed text to a plugin, so the answers are given there or through the plugin's tools.
extension FormsPlugin {
    /// At most this many resume chips (the newest sessions first).
    static let resumeChips = 2

    /// The language a template is shown in for a chat in `chat`: the chat's when the template has it, else English.
    static func language(of template: FormTemplate, chat: ChatLanguage = .arabic) -> String {
        template.metadata.languageSupport.contains(chat.rawValue) ? chat.rawValue : "en"
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        let names = catalog.templates.map { $0.metadata.name.text(Self.language(of: $0, chat: language)) }
        return language == .arabic
            ? ["تعبئة النماذج خطوة بخطوة: " + names.joined(separator: "، ")]
            : ["filling in forms step by step: " + names.joined(separator: ", ")]
    }

    public func suggestions() async throws -> [ChatSuggestion] { try await suggestions(in: .arabic) }

    public func suggestions(in language: ChatLanguage) async throws -> [ChatSuggestion] {
        let arabic = language == .arabic
        let store = try open()
        var chips: [ChatSuggestion] = []
        let today = CivilDate.today(now())
        let unfinished = try store.sessions().sorted { $0.createdAt > $1.createdAt }.compactMap {
            record -> FormSession? in
            guard
                let s = try? FormSession.resume(id: record.id, store: store, catalog: catalog, today: today, now: now),
                !s.isComplete
            else { return nil }
            return s
        }
        for s in unfinished.prefix(Self.resumeChips) {
            chips.append(
                ChatSuggestion(
                    id: "forms-resume-\(s.id)",
                    text:
                        "\(arabic ? "أكمل" : "Continue"): \(s.template.metadata.name.text(Self.language(of: s.template, chat: language))) (\(s.progress.percent)%)",
                    pluginID: id, payload: .object(["action": .string("resume"), "sessionId": .string(s.id)])))
        }
        for t in catalog.templates {
            chips.append(
                ChatSuggestion(
                    id: "forms-start-\(t.metadata.id)",
                    text: "\(arabic ? "ابدأ" : "Start"): \(t.metadata.name.text(Self.language(of: t, chat: language)))",
                    pluginID: id,
                    payload: .object(["action": .string("start"), "templateId": .string(t.metadata.id)])))
        }
        return chips
    }

    public func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply? {
        try await reply(to: suggestion, in: .arabic)
    }

    public func reply(to suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> GroundedReply? {
        guard suggestion.pluginID == id else { return nil }
        let today = CivilDate.today(now())
        let session: FormSession
        switch (suggestion.payload["action"]?.stringValue, suggestion.payload["sessionId"]?.stringValue) {
        case ("resume", let sessionID?):
            session = try FormSession.resume(id: sessionID, store: try open(), catalog: catalog, today: today, now: now)
        case ("start", _):
            guard let templateID = suggestion.payload["templateId"]?.stringValue else {
                throw ToolError(tool: id, "the suggestion '\(suggestion.id)' names no templateId")
            }
            let template = try catalog.template(templateID)
            session = try FormSession.start(
                template: template, store: try open(), language: Self.language(of: template, chat: language),
                today: today, now: now)
        default:
            throw ToolError(tool: id, "the suggestion '\(suggestion.id)' has no action 'start' or 'resume'")
        }
        return Self.grounded(session, userText: suggestion.text, in: language)
    }

    /// The reply for a session: its name, progress and next question, always stated by the template sentence.
    static func grounded(_ s: FormSession, userText: String, in language: ChatLanguage = .arabic) -> GroundedReply {
        let name = s.template.metadata.name.text(s.language)
        let progress = s.progress
        let next = s.nextQuestion
        let arabic = language == .arabic
        var fallback = "\(name): "
        if let q = next {
            fallback +=
                arabic
                ? "السؤال \(progress.answered + 1) من \(progress.total) (\(q.stepTitle)): \(q.prompt)"
                : "question \(progress.answered + 1) of \(progress.total) (\(q.stepTitle)): \(q.prompt)"
            if !q.choices.isEmpty { fallback += " " + q.choices.joined(separator: arabic ? "، " : ", ") }
        } else {
            fallback += arabic ? "اكتمل النموذج." : "the form is complete."
        }
        fallback += arabic ? " تابع بالأمر: sanad form resume \(s.id)" : " Continue with: sanad form resume \(s.id)"
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(arabic ? "Arabic" : "English") only, in one \
            sentence: say that the form "\(name)" is open and ask this question exactly: \(next?.prompt ?? "(complete)")
            """
        return GroundedReply(
            messages: [.system(system), .user(userText)],
            facts: [
                GroundingFact(name: arabic ? "النموذج (\(name))" : "the form (\(name))", accepted: [name]),
                GroundingFact(name: arabic ? "السؤال" : "the question", accepted: next.map { [$0.prompt] } ?? [name]),
            ],
            allowedNumbers: nil, language: arabic ? .arabic : .english, fallback: fallback)
    }
}
