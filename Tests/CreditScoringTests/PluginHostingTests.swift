import CreditScoringPlugin
import Foundation
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

/// The `credit-scoring` plugin as the host loads it from a tier config: its tools share the store with `sanad credit`.
@Suite("credit-scoring plugin")
struct PluginHostingTests {
    func tool(_ plugin: CreditScoringPlugin, _ name: String) throws -> any Tool {
        try #require(plugin.tools.first { $0.name == name })
    }

    @Test("credit_analyze signs a record in the plugin's data folder; credit_verify and credit_history see it")
    func tools() async throws {
        let dir = try TestPaths.temporaryDirectory()
        let messages = dir.appendingPathComponent("m.txt")
        try """
        2024-03-01T10:15 | Mom | habibi did you pay the rent?
        2024-03-01T10:16 | Maria | yes mama, paid the rent today
        2024-03-02T09:00 | Ali | can you lend me 200?
        2024-03-02T09:05 | Maria | sure, pay me back Friday

        """.write(to: messages, atomically: true, encoding: .utf8)
        let plugin = try CreditScoringPlugin(
            context: PluginContext(
                options: ["me": .array([.string("Maria")])], dataDirectory: dir.appendingPathComponent("data"),
                now: { Date(timeIntervalSince1970: 1_795_327_200) }))
        // No analysis before the person's consent; given once, it is kept and recorded.
        await #expect(throws: (any Error).self) {
            _ = try await tool(plugin, "credit_analyze").call(.object(["file": .string(messages.path)]))
        }
        let out = try await tool(plugin, "credit_analyze").call(
            .object(["file": .string(messages.path), "scope": .string("all"), "consent": .bool(true)]))
        #expect(out["record"]?["consent"]?["how"]?.stringValue == "tool")
        let file = try #require(out["file"]?.stringValue)
        #expect(file.hasPrefix(dir.appendingPathComponent("data/records").path))
        #expect(out["record"]?["counts"]?["fromMe"]?.intValue == 2)
        // The record holds no message text.
        let record = try String(contentsOfFile: file, encoding: .utf8)
        for fragment in ["habibi", "rent today", "lend me", "Friday"] { #expect(!record.contains(fragment)) }
        let verified = try await tool(plugin, "credit_verify").call(.object(["file": .string(file)]))
        #expect(verified["valid"]?.boolValue == true && verified["keyId"] == out["keyId"])
        let history = try await tool(plugin, "credit_history").call(.object([:]))
        #expect(history.arrayValue?.count == 1 && history.arrayValue?.first?["state"]?.stringValue == "local")
        await #expect(throws: (any Error).self) {
            _ = try await tool(plugin, "credit_analyze").call(
                .object(["file": .string(dir.appendingPathComponent("none").path)]))
        }
        await #expect(throws: (any Error).self) {
            _ = try await tool(plugin, "credit_analyze").call(
                .object(["file": .string(messages.path), "scope": .string("x")]))
        }
    }

    @Test("options are strict: an unknown key or a bad 'me' names the plugin and the key")
    func options() throws {
        let dir = try TestPaths.temporaryDirectory()
        for (options, key) in [
            (["colour": JSONValue.string("red")], "colour"), (["me": .string("Maria")], "me"),
            (["me": .array([])], "me"),
        ] {
            #expect {
                _ = try CreditScoringPlugin(context: PluginContext(options: options, dataDirectory: dir))
            } throws: { "\($0)".contains("credit-scoring") && "\($0)".contains(key) }
        }
    }
}
