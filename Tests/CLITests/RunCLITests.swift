import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad run`: a plain multi-turn chat (issue 44), on SmolLM2 with greedy decoding.
@Suite("sanad run", .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct RunCLITests {
    func run(_ input: [String], _ extra: [String] = []) throws -> SanadCLI.Result {
        try SanadCLI.run(
            ["run", TestPaths.smolLM2, "--temp", "0", "-n", "16"] + extra, stdin: input.joined(separator: "\n") + "\n")
    }

    func conversation(_ file: URL) throws -> [ChatMessage] {
        let root = try JSONValue.parse(try Data(contentsOf: file))
        return try #require(root["messages"]?.arrayValue).map {
            ChatMessage(
                role: ChatRole(rawValue: $0["role"]?.stringValue ?? "") ?? .tool,
                content: $0["content"]?.stringValue ?? "")
        }
    }

    @Test("turns stream and are kept: /save writes them, and /load continues exactly where the conversation was")
    func turnsAndSave() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = dir.appendingPathComponent("whole.json")
        let first = dir.appendingPathComponent("first.json")
        let r = try run([
            "What is the capital of France?", "/save \(first.path)", "And of Spain?", "/save \(whole.path)", "/bye",
            "never read",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("> What is the capital of France?") && !r.stdout.contains("never read"))
        #expect(r.stderr.contains("generated at") && r.stderr.contains("seed "), "\(r.stderr)")
        let messages = try conversation(whole)
        #expect(messages.map(\.role) == [.user, .assistant, .user, .assistant])
        #expect(messages.allSatisfy { !$0.content.isEmpty })
        // The second reply again, from the first turn loaded in a new process: the same words.
        let resumed = try run(["/load \(first.path)", "And of Spain?", "/save \(whole.path)"])
        #expect(resumed.status == 0 && resumed.stdout.contains("[loaded 2 messages"), "\(resumed.stdout)")
        #expect(try conversation(whole).last == messages.last)
    }

    @Test("a conversation past the context leaves out its oldest turns and says so; /clear and /system; errors")
    func contextAndCommands() throws {
        let questions = (1...6).map { "Tell me one short fact about the number \($0)." }
        let long = try run(questions, ["-c", "128"])
        #expect(long.status == 0, "\(long.stderr)")
        #expect(long.stderr.contains("is full: the oldest"), "\(long.stderr)")
        #expect(long.stderr.components(separatedBy: "generated at").count == 7, "every question got a reply")
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let saved = dir.appendingPathComponent("c.json")
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"messages": [{"role": "narrator", "content": "x"}]}"#.utf8).write(to: bad)
        let r = try run([
            "/system You are terse.", "Hi", "/clear", "/frobnicate", "/load \(bad.path)", "/save \(saved.path)",
        ])
        #expect(r.stdout.contains("[system message set]") && r.stdout.contains("[conversation cleared]"))
        #expect(r.stdout.contains("! unknown command /frobnicate"))
        #expect(r.stdout.contains("bad.json: messages[0] needs a role"), "\(r.stdout)")
        let root = try JSONValue.parse(try Data(contentsOf: saved))
        #expect(root["system"]?.stringValue == "You are terse." && root["messages"]?.arrayValue?.isEmpty == true)
    }
}
