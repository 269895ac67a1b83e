import Foundation
import SanadChat
import SanadCore

/// The forms plugin's chips in the chat (Arabic or English): resume each unfinished session, start each template the
/// product offers this person (`offer`, see `FormOffer`). Tapping one opens the form in the chat (`FormsChatTask`);
/// `reply(to:)` words the same question as a grounded reply for hosts that do not hold tasks.
extension FormsPlugin {
    /// At most this many resume chips (the newest sessions first).
    static let resumeChips = 2

    /// The language a template is shown in for a chat in `chat`: the chat's when the template has it, else English.
    static func language(of template: FormTemplate, chat: ChatLanguage = .arabic) -> String {
        template.metadata.languageSupport.contains(chat.rawValue) ? chat.rawValue : "en"
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        let names = offeredTemplates.map { $0.metadata.name.text(Self.language(of: $0, chat: language)) }
        return language == .arabic
            ? ["تعبئة النماذج خطوة بخطوة: " + names.joined(separator: "، ")]
            : ["filling in forms step by step: " + names.joined(separator: ", ")]
    }

    public func suggestions() async throws -> [ChatSuggestion] { try await suggestions(in: .arabic) }

    public func suggestions(in language: ChatLanguage) async throws -> [ChatSuggestion] {
        try await suggestions(in: language, openTask: nil)
    }

    /// The chips, without the resume chip of a form that is open in this chat now (`openTask`): the person is in it.
    public func suggestions(in language: ChatLanguage, openTask: ChatTask?) async throws -> [ChatSuggestion] {
        let arabic = language == .arabic
        var chips: [ChatSuggestion] = []
        let open = openTask?.pluginID == id ? openTask?.state["sessionId"]?.stringValue : nil
        let all = try unfinishedSessions(try self.open())
        let unfinished = all.filter { $0.id != open }.prefix(Self.resumeChips)
        for s in unfinished {
            chips.append(
                ChatSuggestion(
                    id: "forms-resume-\(s.id)",
                    text:
                        "\(arabic ? "أكمل" : "Continue"): \(s.template.metadata.name.text(Self.language(of: s.template, chat: language))) (\(s.progress.percent)%)",
                    pluginID: id, payload: .object(["action": .string("resume"), "sessionId": .string(s.id)])))
        }
        // A template with an unfinished session has its resume chip instead (starting it would resume it anyway), and
        // the open form's template none.
        let resumed = Set((unfinished + all.filter { $0.id == open }).map(\.template.metadata.id))
        for t in offeredTemplates where !resumed.contains(t.metadata.id) {
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
        return Self.grounded(try chatSession(for: suggestion, in: language), userText: suggestion.text, in: language)
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
