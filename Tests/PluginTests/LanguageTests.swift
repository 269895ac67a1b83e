import AbsherData
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import Testing

/// Issue 35 item 3: a reply is in its message's language (Arabic script → Arabic, other letters → English, a mix by
/// the majority of letters); the chat's language (`--lang`) sets the greeting, the chips and the pages; every text
/// of the Absher product exists in both.
@Suite("Reply language")
struct LanguageTests {
    @Test(
        "a message's language is the majority of its letters",
        arguments: [
            ("جوازي متى يخلص؟", ChatLanguage.arabic), ("When does my passport expire?", .english),
            ("كم رسوم تجديد الجواز passport؟", .arabic), ("How much is the جواز renewal fee?", .english),
            ("٥٥٥ 123 ؟!", nil), ("ab جد", nil), ("", nil), ("Ça coûte combien ?", .english),
        ])
    func detection(text: String, language: ChatLanguage?) {
        #expect(ChatLanguage.of(text) == language)
        #expect(TypedQuestion(text, fallback: .english).language == language ?? .english)
    }

    /// The chat's replies (not the user's messages) after sending `text`, in a chat of `language`.
    func replies(to text: String, chat language: ChatLanguage = .arabic) async throws -> [ChatEntry] {
        let engine = ScriptedSession(replies: [["draft", " 2023"]])
        let session = await openChat(try samplePlugins(), engine: engine, language: language)
        let before = await session.messages.count
        try await session.send(text)
        return await Array(session.messages.dropFirst(before + 1))
    }

    @Test(
        "English → English, Arabic → Arabic, a mix by the majority: the reply and its note, whatever the chat's language",
        arguments: [
            ("How much does it cost to renew my passport?", ChatLanguage.english, "300 SAR"),
            ("كم رسوم تجديد جواز السفر؟", .arabic, "300 ريال"),
            ("كم رسوم تجديد الجواز passport؟", .arabic, "300 ريال"),
            ("How much is the جواز renewal fee?", .english, "300 SAR"),
            ("When does my national ID expire?", .english, "2028-03-16"),
            ("Do I have any alerts?", .english, "45 days left"),
            (
                "When is my son Hussam's licence due?", .english,
                "Your son Hussam: driving licence issue, due in 30 days"
            ),
            ("What's the weather in Riyadh today?", .english, "I can help you with:"),
            ("وش أخبار الطقس؟", .arabic, "أقدر أساعدك في:"),
        ])
    func replyLanguage(text: String, language: ChatLanguage, fact: String) async throws {
        for chat in ChatLanguage.allCases {
            let replies = try await replies(to: text, chat: chat)
            let reply = try #require(replies.first)
            #expect(ChatLanguage.of(reply.content) == language, "\(chat): \(reply.content)")
            #expect(reply.content.contains(fact), "\(chat): \(reply.content)")
            if let note = reply.check?.note { #expect(ChatLanguage.of(note) == language, "\(note)") }
            if let link = reply.deepLink { #expect(ChatLanguage.of(link.title) == language, "\(link.title)") }
        }
    }

    @Test("--lang sets the greeting, the chips, a chip's reply, its follow-ups and the pages; typed text keeps its own")
    func chatLanguage() async throws {
        for language in ChatLanguage.allCases {
            let session = await openChat(try samplePlugins(), language: language)
            let greeting = try #require(await session.messages.first)
            #expect(greeting.content == AbsherSettings.product.wording(for: language).greeting)
            let chips = await session.suggestions
            #expect(chips.count == 2 && chips.allSatisfy { ChatLanguage.of($0.text) == language }, "\(chips)")
            try await session.sendSuggestion(number: 1)
            let after = await session.messages.suffix(2)
            // The chip's reply (the template: the scripted draft fails) and the dependent's reminder.
            #expect(after.allSatisfy { ChatLanguage.of($0.content) == language }, "\(after.map(\.content))")
            for link in await session.links {
                let page = try await session.follow(link)
                let text = page.title + page.sections.flatMap { $0.fields.map(\.label) }.joined() + page.notes.joined()
                #expect(ChatLanguage.of(text) == language, "\(text)")
                await session.returnToChat()
            }
        }
        let english = await openChat(try samplePlugins(), language: .english)
        try await english.send("جوازي متى يخلص؟")
        let arabicReply = try #require(await english.messages.last)
        #expect(arabicReply.content.contains("باقي 75 يوماً"), "\(arabicReply.content)")
    }

    @Test(
        "SmolLM2's fluent English draft that adds claims of its own (sanad serve, 2026-11-27) fails the check; a faithful rewording passes"
    )
    func fluentClaims() async throws {
        let question = "How much does it cost to renew my passport?"
        let draft =
            "The cost of renewing a passport varies depending on the country you are visiting and the type of service "
            + "you need. In some countries, such as the UK, it can range from 300 SAR for 5 years to 600 SAR for 10 "
            + "years. The cost is based on the current market rate."
        let faithful =
            "Passport renewal costs 300 SAR for 5 years and 600 SAR for 10 years; the renewal fee of your passport is "
            + "300 SAR. You can start from the link below."
        let wording = AbsherSettings.englishWording
        var answer: TypedAnswer?
        for plugin in try samplePlugins() {
            if let a = try await plugin.answer(to: TypedQuestion(question)), a.score > answer?.score ?? 0 { answer = a }
        }
        let reply = try #require(answer?.reply)
        let rejected = GroundingCheck.verify(draft, against: reply, wording: wording)
        guard case .rejected(let reasons) = rejected else {
            Issue.record("the draft passed: \(rejected)")
            return
        }
        #expect(reasons.contains { $0.contains("varies") && $0.contains("market") }, "\(reasons)")
        #expect(GroundingCheck.verify(faithful, against: reply, wording: wording).isVerified)
        // Gemma 3 270M reads its instructions back (sanad chat -m gemma-3-270m-q4_k_m.gguf, 2026-11-27): the facts
        // are there, the words are the prompt's, and it is no answer.
        let system = try #require(reply.messages.first { $0.role == .system }?.content)
        #expect(!GroundingCheck.verify(system, against: reply, wording: wording).isVerified, "\(system)")
        // Through the chat: the template is what the person reads.
        let session = await openChat(try samplePlugins(), engine: ScriptedSession(replies: [[draft]]))
        try await session.send(question)
        let stored = try #require(await session.messages.last)
        #expect(stored.content == reply.fallback && stored.check?.verified == false)
    }

    @Test("every text of the product exists in both languages: wording, errors, labels, capabilities")
    func bothLanguages() throws {
        let product = AbsherSettings.product
        #expect(product.languages == [.arabic, .english])
        let plugins = try samplePlugins()
        for language in ChatLanguage.allCases {
            let w = product.wording(for: language)
            let t = product.terminal(for: language)
            let texts: [String] =
                [
                    w.greeting, w.suggestionsFailed("p", "e"), w.engineFailed("e"), w.replyPreparationFailed("e"),
                    w.engineNotReady, w.replyFailed("e"), w.followUpsFailed("p", "e"), w.linkFailed("e"),
                    w.verifiedNote(["x"]), w.rejectedNote(["x"]), w.templateNote, w.emptyText, w.missingFact("x"),
                    w.foreignNumbers(["1"]), w.notArabic(10), w.notEnglish(10), w.uncoveredQuestion?([]) ?? "",
                    w.replyTimedOut(2), w.engineUnloaded("m"), t.user, t.writing, t.draft, t.suggestions, t.link(1),
                    t.loading, t.ready, t.stopped, t.backToChat, t.pageShown, t.noSuggestions, t.noSuchSuggestion(5, 2),
                    t.saved("f", 3), t.loaded("f", 3), t.toolsOn(2), t.toolsOff,
                ] + plugins.flatMap { $0.capabilities(in: language) }
            for text in texts {
                // Technical details (an error's text, a command) may be in English in either language.
                let words = text.split(separator: "\n").first.map(String.init) ?? text
                #expect(ChatLanguage.of(words) == language, "\(language): \(text)")
            }
        }
        #expect(AbsherSettings.englishWording.replyTimedOut(1).contains("1 second,"))
        #expect(AbsherSettings.wording.replyTimedOut(2).contains("ثانيتين"))
    }
}
