import FormsPlugin
import Foundation
import SanadChat
import SanadCore
import Testing

/// The `forms` plugin's tools: a chat can start, answer, go back in and review a form.
@Suite("forms plugin")
struct FormsPluginTests {
    func tool(_ plugin: FormsPlugin, _ name: String) throws -> any Tool {
        try #require(plugin.tools.first { $0.name == name })
    }

    @Test("start, answer (refused and saved), back and review through the tools")
    func tools() async throws {
        let context = PluginContext(dataDirectory: FormsFixture.temporaryDirectory())
        let plugin = try FormsPlugin(context: context)
        #expect(plugin.tools.map(\.name) == ["list_forms", "start_form", "answer_form", "form_back", "form_review"])
        let list = try await tool(plugin, "list_forms").call(.null)
        #expect(list["templates"]?.arrayValue?.count == 2)
        let started = try await tool(plugin, "start_form").call(
            .object(["templateId": .string("dmv-renewal"), "language": .string("ar")]))
        let id = try #require(started["sessionId"]?.stringValue)
        #expect(started["question"]?["prompt"]?.stringValue?.contains("هل نبدأ") == true)
        let answer = try tool(plugin, "answer_form")
        let refused = try await answer.call(.object(["sessionId": .string(id), "answer": .string("ربما")]))
        #expect(refused["outcomes"]?.arrayValue?.first?["saved"] == .bool(false))
        let saved = try await answer.call(.object(["sessionId": .string(id), "answer": .string("نعم")]))
        #expect(saved["outcomes"]?.arrayValue?.first?["value"] == .string("yes"))
        #expect(saved["question"]?["fieldId"] == .string("state"))
        _ = try await answer.call(
            .object(["sessionId": .string(id), "answer": .string("TX"), "fieldId": .string("state")]))
        let back = try await tool(plugin, "form_back").call(.object(["sessionId": .string(id)]))
        #expect(back["reopened"] == .string("state"))
        let review = try await tool(plugin, "form_review").call(.object(["sessionId": .string(id)]))
        #expect(review["answers"]?["consent"] == .string("yes") && review["answers"]?["state"] == nil)
        await #expect(throws: ToolError.self) {
            _ = try await answer.call(.object(["sessionId": .string("nope"), "answer": .string("x")]))
        }
        #expect(throws: PluginError.self) {
            _ = try FormsPlugin(
                context: PluginContext(options: ["stor": .string("x")], dataDirectory: context.dataDirectory))
        }
    }

    @Test("chips start each form and resume an unfinished one; the reply states the next question in Arabic")
    func chips() async throws {
        let plugin = try FormsPlugin(context: PluginContext(dataDirectory: FormsFixture.temporaryDirectory()))
        let first = try await plugin.suggestions()
        #expect(first.map(\.id) == ["forms-start-dmv-renewal", "forms-start-ds-160"], "\(first)")
        #expect(first[0].text.hasPrefix("ابدأ: ") && first.allSatisfy { $0.pluginID == "forms" })
        let started = try #require(try await plugin.reply(to: first[0]))
        #expect(
            started.fallback.contains("هل نبدأ") && started.fallback.contains("sanad form resume"),
            "\(started.fallback)")
        let chips = try await plugin.suggestions()
        let resume = try #require(chips.first)
        #expect(resume.id.hasPrefix("forms-resume-dmv-renewal-") && resume.text.contains("(0%)"), "\(chips)")
        let sessionID = try #require(resume.payload["sessionId"]?.stringValue)
        _ = try await tool(plugin, "answer_form").call(
            .object(["sessionId": .string(sessionID), "answer": .string("نعم")]))
        let resumed = try #require(try await plugin.reply(to: resume))
        #expect(resumed.fallback.contains("السؤال 2 من") && resumed.fallback.contains(sessionID), "\(resumed.fallback)")
        #expect(try await plugin.reply(to: ChatSuggestion(id: "x", text: "x", pluginID: "other")) == nil)
        await #expect(throws: ToolError.self) {
            _ = try await plugin.reply(to: ChatSuggestion(id: "x", text: "x", pluginID: "forms", payload: .null))
        }
    }
}
