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
}
