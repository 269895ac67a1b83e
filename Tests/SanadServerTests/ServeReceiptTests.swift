import Foundation
import SanadCore
import SanadReceipts
import SanadSigning
import SanadTestSupport
import Testing

/// `sanad serve` signing receipts (issue 41) with SmolLM2 on the pure-Swift engine: a response's `receipt` and a
/// stream's last event before `[DONE]` verify (`ReceiptVerifier`) and state the answer; a changed receipt fails;
/// the receipt of a response replays identically with `sanad receipt verify --replay`.
@Suite(
    "sanad serve receipts", .serialized,
    .enabled(
        if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil
            && (try? LibCrypto.shared()) != nil))
struct ServeReceiptTests {
    static let engine = [
        "--backend", "pure-swift", "-m", TestPaths.smolLM2, "-c", "512", "--tier", "4gb", "--no-embeddings",
        "--no-web-chat",
    ]

    func chat(_ extra: String) -> String {
        #"{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},"#
            + #"{"role":"user","content":"What is the capital of France?"}],"temperature":0,"max_tokens":16"# + extra
            + "}"
    }

    @Test("opt-in per request: the response's receipt verifies, states the answer, and a changed one fails")
    func perRequest() throws {
        let data = try TestPaths.temporaryDirectory()
        let server = try ServerProcess(Self.engine, environment: ["SANAD_DATA": data.path])
        defer { server.stop() }
        let lib = try LibCrypto.shared()

        let none = try request(server.port, "POST", "/v1/chat/completions", body: chat(""))
        #expect(none.status == 200 && none.json?["receipt"] == nil, "\(none.body)")

        let reply = try request(
            server.port, "POST", "/v1/chat/completions", body: chat(#","receipt":{"include_text":true}"#))
        #expect(reply.status == 200, "\(reply.body)")
        let object = try #require(reply.json?["receipt"], "\(reply.body)")
        let receipt = try ReceiptVerifier.verify(object: object, lib: lib)
        let content = reply.json?["choices"]?.arrayValue?.first?["message"]?["content"]?.stringValue
        #expect(receipt.document["output"]?["text"]?.stringValue == content)
        #expect(receipt.engineID == "pure-swift" && receipt.notReplayable == nil)
        #expect(receipt.document["parameters"]?["chatTemplate"]?.stringValue == "model")
        #expect(receipt.outputTokenCount == reply.json?["usage"]?["completion_tokens"]?.intValue)
        let key = try SanadCLI.run(["keys", "show", "--json"], environment: ["SANAD_DATA": data.path])
        #expect(try JSONValue.parse(key.stdout)["keyId"]?.stringValue == receipt.signer.keyID, "\(key.stderr)")

        // One changed character of the stated output is refused.
        var document = try #require(object.objectValue)
        var output = try #require(document["output"]?.objectValue)
        output["tokens"] = .number(Double(receipt.outputTokenCount + 1))
        document["output"] = .object(output)
        #expect(throws: SignatureProblem.self) { try ReceiptVerifier.verify(object: .object(document), lib: lib) }

        // The response as a file replays with another kernel build.
        let file = data.appendingPathComponent("response.json")
        try Data(reply.body.utf8).write(to: file)
        let replay = try SanadCLI.run(
            ["receipt", "verify", file.path, "--replay"],
            environment: ["SANAD_DATA": data.path, "SANAD_KERNELS": "portable"])
        #expect(
            replay.status == 0 && replay.stdout.contains("replay: identical: "), "\(replay.stdout) \(replay.stderr)")

        let completion = try request(
            server.port, "POST", "/v1/completions",
            body: #"{"prompt":"The capital of France is","max_tokens":5,"temperature":0,"receipt":true}"#)
        let plain = try ReceiptVerifier.verify(
            object: try #require(completion.json?["receipt"], "\(completion.body)"), lib: lib)
        #expect(
            plain.document["textIncluded"] == .bool(false) && plain.document["parameters"]?["chatTemplate"] == .null)

        let several = try request(
            server.port, "POST", "/v1/chat/completions", body: chat(#","n":2,"receipt":true"#))
        #expect(several.status == 400 && several.json?["error"]?["param"]?.stringValue == "receipt", "\(several.body)")
        let wrong = try request(server.port, "POST", "/v1/chat/completions", body: chat(#","receipt":"yes""#))
        #expect(wrong.status == 400, "\(wrong.body)")
    }

    @Test("--receipts: every answer carries one, a stream in its last event before [DONE], a JSON schema is stated")
    func perServer() throws {
        let data = try TestPaths.temporaryDirectory()
        let server = try ServerProcess(
            Self.engine + ["--receipts", "--receipt-include-text"], environment: ["SANAD_DATA": data.path])
        defer { server.stop() }
        let lib = try LibCrypto.shared()

        let streamed = try request(
            server.port, "POST", "/v1/chat/completions",
            body: chat(#","stream":true,"stream_options":{"include_usage":true}"#))
        let payloads = events(streamed.body)
        #expect(payloads.last == "[DONE]", "\(streamed.body)")
        let chunks = payloads.dropLast().compactMap { try? JSONValue.parse($0) }
        let text = chunks.compactMap { $0["choices"]?.arrayValue?.first?["delta"]?["content"]?.stringValue }.joined()
        let last = try #require(chunks.last?["receipt"], "\(streamed.body)")
        #expect(chunks.dropLast().allSatisfy { $0["receipt"] == nil })
        let receipt = try ReceiptVerifier.verify(object: last, lib: lib)
        #expect(receipt.document["output"]?["text"]?.stringValue == text)

        let schema = #"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#
        let structured = try request(
            server.port, "POST", "/v1/chat/completions",
            body: chat(#","response_format":{"type":"json_schema","json_schema":{"name":"c","schema":\#(schema)}}"#))
        let constrained = try ReceiptVerifier.verify(
            object: try #require(structured.json?["receipt"], "\(structured.body)"), lib: lib)
        let stated = try JSONValue.parse(schema)
        #expect(constrained.constraintKind == "json-schema" && constrained.schema == stated)

        let optedOut = try request(server.port, "POST", "/v1/chat/completions", body: chat(#","receipt":false"#))
        #expect(optedOut.status == 200 && optedOut.json?["receipt"] == nil, "\(optedOut.body)")
        let several = try request(server.port, "POST", "/v1/chat/completions", body: chat(#","n":2"#))
        #expect(several.status == 400 && several.body.contains("\\\"receipt\\\": false"), "\(several.body)")
    }
}
