import Foundation
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The prompt tokens Sanad makes for a chat equal those of `llama-server --jinja` (llama.cpp's own Jinja engine) for
/// the same messages: SmolLM2 with its own template; Gemma 3 (whose file has no template: llama-server would use
/// chatml, Sanad the gemma family) with a Gemma 3 template file given to both.
@Suite(.serialized) struct ChatTemplateParityTests {
    static let server = LlamaTools.prefix.appendingPathComponent("bin/llama-server")
    static let serverMissing: String? =
        FileManager.default.isExecutableFile(atPath: server.path)
        ? nil : "\(server.path) is not installed; run scripts/install-llama"

    static let messages: [ChatMessage] = [
        .system("You are a concise assistant."), .user("What is the capital of Saudi Arabia?"),
        .assistant("Riyadh."), .user("And its population?"),
    ]

    /// A Gemma 3 instruction template (the shape of google/gemma-3-*-it's: the system text opens the first user
    /// turn).
    static let gemma3Template = """
        {{ bos_token }}
        {%- if messages[0]['role'] == 'system' -%}
            {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
            {%- set loop_messages = messages[1:] -%}
        {%- else -%}
            {%- set first_user_prefix = "" -%}
            {%- set loop_messages = messages -%}
        {%- endif -%}
        {%- for message in loop_messages -%}
            {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
                {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
            {%- endif -%}
            {%- set role = "model" if message['role'] == 'assistant' else message['role'] -%}
            {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
            {{- message['content'] | trim }}{{ '<end_of_turn>\\n' }}
        {%- endfor -%}
        {%- if add_generation_prompt -%}
            {{ '<start_of_turn>model\\n' }}
        {%- endif -%}
        """

    @Test(
        .enabled(if: serverMissing == nil, "\(serverMissing ?? "")"),
        .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil, "models/\(TestPaths.smolLM2) is absent"))
    func smolLM2PromptTokensEqualLlamaServerJinja() async throws {
        let model = try #require(TestPaths.model(TestPaths.smolLM2))
        try await expectSameTokens(model: model, templateFile: nil)
    }

    @Test(
        .enabled(if: serverMissing == nil, "\(serverMissing ?? "")"),
        .enabled(if: TestPaths.model(TestPaths.gemma3) != nil, "models/\(TestPaths.gemma3) is absent"))
    func gemma3PromptTokensEqualLlamaServerJinjaWithTheSameTemplate() async throws {
        let model = try #require(TestPaths.model(TestPaths.gemma3))
        let file = try TestPaths.temporaryDirectory().appendingPathComponent("gemma3.jinja")
        try Self.gemma3Template.write(to: file, atomically: true, encoding: .utf8)
        try await expectSameTokens(model: model, templateFile: file)
        // Without a template the file's architecture picks the built-in gemma family, which this template matches.
        let session = try await PureSwiftBackend().loadModel(at: model, options: ModelLoadOptions(contextLength: 256))
        let own = try session.applyChatTemplate(Self.messages, addAssistantPrompt: true)
        let fromFile = try session.applyChatTemplate(
            Self.messages, addAssistantPrompt: true, override: try ChatPromptTemplate.named(file.path))
        #expect(own == fromFile)
    }

    private func expectSameTokens(model: URL, templateFile: URL?) async throws {
        let session = try await PureSwiftBackend().loadModel(at: model, options: ModelLoadOptions(contextLength: 256))
        let override = try templateFile.map { try ChatPromptTemplate.named($0.path) }
        let prompt = try session.applyChatTemplate(Self.messages, addAssistantPrompt: true, override: override)
        let ours = try session.tokenize(prompt, addSpecial: true, parseSpecial: true)

        let server = try LlamaServer(model: model, templateFile: templateFile)
        defer { server.stop() }
        let body: [String: Any] = [
            "messages": Self.messages.map { ["role": $0.role.rawValue, "content": $0.content] },
            "add_generation_prompt": true,
        ]
        let applied = try server.post("/apply-template", body)
        let theirPrompt = try #require(applied["prompt"] as? String)
        #expect(prompt == theirPrompt)
        let tokenized = try server.post(
            "/tokenize", ["content": theirPrompt, "add_special": true, "parse_special": true])
        let theirs = try #require(tokenized["tokens"] as? [Int]).map(Int32.init)
        #expect(ours == theirs, "prompt: \(prompt.debugDescription)")
    }
}

/// `llama-server --jinja` on a free port, for one test.
final class LlamaServer {
    let process = Process()
    let port: Int

    init(model: URL, templateFile: URL?) throws {
        port = Int.random(in: 20_000..<60_000)
        process.executableURL = ChatTemplateParityTests.server
        process.arguments =
            ["-m", model.path, "--jinja", "--port", String(port), "--host", "127.0.0.1", "-c", "512", "-t", "1"]
            + (templateFile.map { ["--chat-template-file", $0.path] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<300 {
            if let health = try? get("/health"), health.contains("ok") { return }
            guard process.isRunning else { throw ServerTestError("llama-server exited before it was ready") }
            usleep(100_000)
        }
        stop()
        throw ServerTestError("llama-server was not ready within 30 s")
    }

    /// SIGKILL: llama-server's SIGTERM waits for its HTTP threads.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The body of GET `path` (or POST of `body` as JSON), through curl.
    private func request(_ path: String, body: Data?) throws -> Data {
        var arguments = ["curl", "-sS", "--max-time", "30", "http://127.0.0.1:\(port)\(path)"]
        if body != nil { arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"] }
        let result = try runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), arguments, stdin: body ?? Data())
        guard result.status == 0 else {
            throw ServerTestError("curl \(path): \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return result.stdout
    }

    func get(_ path: String) throws -> String {
        String(decoding: try request(path, body: nil), as: UTF8.self)
    }

    func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let data = try request(path, body: try JSONSerialization.data(withJSONObject: body))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ServerTestError("\(path) answered \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }
}
