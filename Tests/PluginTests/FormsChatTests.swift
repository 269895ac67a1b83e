import AbsherData
import FormsPlugin
import Foundation
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

/// A form started from a chip continues in the chat: typed text answers it, its commands work, pausing returns to
/// the chat with a chip to continue, and the product's `offer` option decides which forms are offered to whom.
@Suite("forms in the chat")
struct FormsChatTests {
    /// The forms plugin over a fresh store, offering what the Absher configs offer (`configs/tier-4gb.json`).
    func formsPlugin(_ dir: URL, offer: JSONValue? = nil) throws -> FormsPlugin {
        let config = TestPaths.packageRoot.appendingPathComponent("configs/tier-4gb.json")
        var options: [String: JSONValue] = ["store": .string(dir.path)]
        if let offer { options["offer"] = offer }
        return try FormsPlugin(
            context: PluginContext(options: options, dataDirectory: dir, configFile: config, now: { sampleNow }))
    }

    /// The `offer` option of the shipped 4 GB config.
    func shippedOffer() throws -> JSONValue {
        let config = TestPaths.packageRoot.appendingPathComponent("configs/tier-4gb.json")
        let json = try JSONValue.parse(Data(contentsOf: config))
        let forms = try #require(json["plugins"]?.arrayValue?.first { $0["id"] == .string("forms") })
        return try #require(forms["options"]?["offer"])
    }

    @Test(
        "a DS-160 chip opens the form in the chat; typed answers, a refusal with its fix, back, review, pause, resume")
    func formInChat() async throws {
        let dir = try TestPaths.temporaryDirectory()
        let forms = try formsPlugin(dir, offer: try shippedOffer())
        let engine = ScriptedSession(replies: [["نعم"]])
        let chat = await openChat(try samplePlugins() + [forms], engine: engine)
        let chips = await chat.suggestions
        // The Absher product offers the DS-160; the DMV renewal only to a person whose data says they live in the US.
        #expect(
            chips.contains { $0.id == "forms-start-ds-160" } && !chips.contains { $0.id == "forms-start-dmv-renewal" })
        let start = try #require(chips.firstIndex { $0.id == "forms-start-ds-160" })
        try await chat.sendSuggestion(number: start + 1)
        var reply = try #require(await chat.messages.last)
        #expect(
            reply.content.contains("[1/") && reply.content.contains("رجوع") && reply.check == nil, "\(reply.content)")
        let sessionID = try #require(await chat.task?.state["sessionId"]?.stringValue)
        #expect(
            !(await chat.suggestions).contains {
                $0.id == "forms-resume-\(sessionID)" || $0.id == "forms-start-ds-160"
            },
            "no chip resumes or starts the form the person is in")
        try await chat.send(FormScripts.ds160[0])
        try await chat.send(FormScripts.ds160[1])
        reply = try #require(await chat.messages.last)
        #expect(reply.content.hasPrefix("✓ ") && reply.content.contains("[3/"), "\(reply.content)")
        try await chat.send("ربما")  // the sex is a choice: refused with the choices
        reply = try #require(await chat.messages.last)
        #expect(reply.content.hasPrefix("✗ ") && reply.content.contains("[3/"), "\(reply.content)")
        try await chat.send(FormScripts.ds160[2])
        try await chat.send("رجوع")
        reply = try #require(await chat.messages.last)
        #expect(reply.content.hasPrefix("↩ ") && reply.content.contains("[3/"), "\(reply.content)")
        try await chat.send(FormScripts.ds160[2])
        try await chat.send("/review")
        reply = try #require(await chat.messages.last)
        #expect(reply.content.contains("المراجعة: أُجيب عن 3 من"), "\(reply.content)")
        try await chat.send("إيقاف")
        reply = try #require(await chat.messages.last)
        #expect(reply.content.contains("أوقفت") && reply.content.contains("%"), "\(reply.content)")
        #expect(await chat.task == nil)
        // Paused: typed text is the chat's again, and a chip continues the same session.
        let resume = try #require(await chat.suggestions.firstIndex { $0.id == "forms-resume-\(sessionID)" })
        #expect(!(await chat.suggestions).contains { $0.id == "forms-start-ds-160" })
        try await chat.sendSuggestion(number: resume + 1)
        reply = try #require(await chat.messages.last)
        #expect(reply.content.contains("[4/"), "\(reply.content)")
        #expect(await chat.task?.state["sessionId"]?.stringValue == sessionID)
        // Every turn of the form was answered without the engine.
        #expect(engine.prompts.isEmpty)
        // Tapping start again (an old chip) resumes the open session instead of creating another.
        let again = ChatSuggestion(
            id: "forms-start-ds-160", text: "ابدأ", pluginID: "forms",
            payload: .object(["action": .string("start"), "templateId": .string("ds-160")]))
        let resumed = try #require(try await forms.beginTask(for: again, in: .arabic))
        #expect(resumed.task?.state["sessionId"]?.stringValue == sessionID)
    }

    @Test("offer: the DMV renewal is offered when the person's data says they live in the US; bad offers name the key")
    func offers() async throws {
        let dir = try TestPaths.temporaryDirectory()
        let user = dir.appendingPathComponent("user.json")
        try Data(#"{"user": {"countryOfResidence": "US"}}"#.utf8).write(to: user)
        let when: JSONValue = .object([
            "userData": .string(user.path), "path": .string("user.countryOfResidence"), "equals": .string("US"),
        ])
        let offer: JSONValue = .array([.string("ds-160"), .object(["template": .string("dmv-renewal"), "when": when])])
        let chips = try await formsPlugin(dir, offer: offer).suggestions(in: .english)
        #expect(chips.map(\.id) == ["forms-start-ds-160", "forms-start-dmv-renewal"], "\(chips)")
        for (bad, key) in [
            (JSONValue.array([.string("nope")]), "offer': [0]"), (.string("ds-160"), "must be an array"),
            (.array([.object(["template": .string("ds-160"), "when": .object([:])])]), "[0].when"),
        ] {
            #expect {
                _ = try formsPlugin(dir, offer: bad)
            } throws: { "\($0)".contains(key) }
        }
    }
}
