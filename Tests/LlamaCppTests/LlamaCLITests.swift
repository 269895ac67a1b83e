import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// The `sanad` binary with the llama backend: a wrong `SANAD_LIBLLAMA` never crashes it, and `compare` works.
@Suite("sanad with the llama backend", .serialized, .enabled(if: SanadCLI.executable != nil, "sanad is not built"))
struct LlamaCLITests {
    static func llamaRow(_ result: SanadCLI.Result) throws -> JSONValue {
        let rows = try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))
        return try #require(rows.arrayValue?.first { $0["id"]?.stringValue == "llama" })
    }

    @Test(arguments: otherSharedObjects + ["/nonexistent/libllama.so"])
    func aWrongLibraryMakesTheBackendUnavailable(_ path: String) throws {
        let result = try SanadCLI.run(["backends", "--json"], environment: ["SANAD_LIBLLAMA": path])
        #expect(!result.crashed)
        #expect(result.status == 0)
        let row = try Self.llamaRow(result)
        #expect(row["available"]?.boolValue == false)
        let reason = try #require(row["reason"]?.stringValue)
        #expect(reason.contains(path))
        #expect(reason.contains("llama.cpp b11434"))
        #expect(reason.contains("scripts/install-llama"))
    }

    @Test(.enabled(if: LlamaFixture.ready, "needs libllama b11434 and SmolLM2"))
    func compareAnEngineWithItselfFindsNoDifference() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let prompts = dir.appendingPathComponent("prompts.json")
        try Data(#"["Hello my name is", {"name": "arabic", "prompt": "اللغة العربية هي"}]"#.utf8).write(to: prompts)
        let text = dir.appendingPathComponent("text.txt")
        try Data(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 20).utf8).write(to: text)
        let model = try #require(LlamaFixture.smolLM2)
        let result = try SanadCLI.run([
            "compare", "-m", model.path, "--backends", "llama,llama", "-n", "6", "-t", "1", "--prompts", prompts.path,
            "-f", text.path, "-c", "64", "--chunks", "2", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))
        #expect(report["total"]?.intValue == 2)
        #expect(report["identical"]?.intValue == 2)
        let arabic = try #require(report["prompts"]?.arrayValue?.last)
        #expect(arabic["name"]?.stringValue == "arabic")
        #expect(arabic["tokens"]?["llama"]?.arrayValue?.count == 6)
        let forced = try #require(report["teacher_forced"])
        #expect(forced["chunks"]?.intValue == 2)
        #expect(forced["positions"]?.intValue == 128)
        #expect(forced["top1_agreement"]?.doubleValue == 1)
        #expect(forced["max_abs_logit_delta"]?.doubleValue == 0)
    }

    @Test func compareNeedsExactlyTwoBackends() throws {
        let result = try SanadCLI.run(["compare", "--backends", "llama"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("exactly two"))
    }

    @Test func compareHelpDocumentsTheMismatchExitCode() throws {
        let result = try SanadCLI.run(["compare", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("2 some continuation"))
    }
}
