import Foundation
import SanadTestSupport
import Testing

// `-ctk/--cache-type-k` and `-ctv/--cache-type-v` (llama.cpp's names), the tier's `kvCache`, and what each engine
// does with them. The pure-Swift engine's Q8_0 cache is checked against llama.cpp in QuantizedCacheTests.
@Suite(
    "KV cache types on the command line and in the tier",
    .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct CacheTypeCLITests {
    @Test("generate runs with a q8_0 cache on the pure-Swift engine; an unknown name is a usage error")
    func generate() throws {
        let r = try SanadCLI.run([
            "generate", "-m", TestPaths.smolLM2, "--backend", "pure-swift", "-ctk", "q8_0", "--cache-type-v", "q8_0",
            "-n", "8", "--temp", "0", "-t", "2", "The capital of France is",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        let bad = try SanadCLI.run(["generate", "-m", TestPaths.smolLM2, "-ctk", "q9_9", "hi"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--cache-type-k 'q9_9'") && bad.stderr.contains("f16, bf16, q8_0"), "\(bad.stderr)")
    }

    @Test("a type the pure-Swift engine does not store is refused naming it and the llama engine")
    func pureSwiftRefusal() throws {
        let r = try SanadCLI.run([
            "generate", "-m", TestPaths.smolLM2, "--backend", "pure-swift", "-ctk", "q4_0", "-n", "2", "hi",
        ])
        #expect(r.status != 0)
        #expect(r.stderr.contains("q4_0") && r.stderr.contains("--backend llama"), "\(r.stderr)")
    }

    @Test(
        "the llama engine takes llama.cpp's cache types",
        .enabled(if: LlamaTools.native != nil, "libllama is not installed"))
    func llamaEngine() throws {
        let r = try SanadCLI.run([
            "generate", "-m", TestPaths.smolLM2, "--backend", "llama", "-ctk", "q4_0", "-ctv", "q8_0", "-n", "8",
            "--temp", "0", "-t", "2", "The capital of France is",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    @Test("bench reports the cache types in llama-bench's type_k/type_v fields and markdown columns")
    func bench() throws {
        let csv = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "0", "-r", "1", "-t", "1",
            "-ctk", "q8_0", "-ctv", "q8_0", "-o", "csv",
        ])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let k = try #require(lines.first?.firstIndex(of: "type_k"))
        let v = try #require(lines.first?.firstIndex(of: "type_v"))
        #expect(lines.count == 2 && lines[1][k] == "\"q8_0\"" && lines[1][v] == "\"q8_0\"", "\(csv.stdout)")
        let markdown = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "0", "-r", "1", "-t", "1",
            "-ctk", "q8_0",
        ])
        #expect(markdown.stdout.contains("type_k") && !markdown.stdout.contains("type_v"), "\(markdown.stdout)")
        #expect(markdown.stdout.contains("q8_0"), "\(markdown.stdout)")
    }

    @Test("the tier's kvCache sets the default, shows in sanad config and shrinks the estimate; bad names are refused")
    func tier() throws {
        let quantized = try SanadCLI.run([
            "config", "--config",
            try temporaryConfig(["kvCache": "{\"typeK\": \"q8_0\", \"typeV\": \"q8_0\", \"why\": \"short memory\"}"])
                .path,
        ])
        #expect(quantized.stdout.contains("KV cache:   keys q8_0, values q8_0 — short memory"), "\(quantized.stdout)")
        let half = try SanadCLI.run(["config", "--config", try temporaryConfig().path])
        #expect(half.stdout.contains("KV cache:   keys f16, values f16"), "\(half.stdout)")
        // SmolLM2 at 512 positions: 30 layers × 3 KV heads × 64 values × 2 sides: 11.25 MiB in F16, 5.98 in Q8_0.
        #expect(half.stdout.contains("KV cache 11.3 MiB"), "\(half.stdout)")
        #expect(quantized.stdout.contains("KV cache 6.0 MiB"), "\(quantized.stdout)")
        let bad = try SanadCLI.run([
            "config", "--config", try temporaryConfig(["kvCache": "{\"typeK\": \"q3_k\"}"]).path,
        ])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("kvCache.typeK") && bad.stderr.contains("q8_0"), "\(bad.stderr)")
    }
}
