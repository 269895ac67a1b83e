import Foundation
import GGUF
import SanadCore
import SanadTestSupport
import Testing

@Suite("sanad CLI foundation", .enabled(if: SanadCLI.executable != nil))
struct CLIFoundationTests {
    @Test("--help lists every foundation command and exits 0")
    func help() throws {
        let r = try SanadCLI.run(["--help"])
        #expect(r.status == 0)
        for command in ["backends", "config", "models"] { #expect(r.stdout.contains("  \(command)")) }
    }

    @Test(
        "every command has --help",
        arguments: ["backends", "config", "models"])
    func commandHelp(command: String) throws {
        let r = try SanadCLI.run([command, "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("Usage: sanad \(command)"))
    }

    @Test("usage errors exit 64 with Error/Usage/See lines")
    func usageErrors() throws {
        let unknown = try SanadCLI.run(["frobnicate"])
        #expect(unknown.status == 64 && unknown.stderr.contains("Error: unknown command 'frobnicate'"))
        let flag = try SanadCLI.run(["models", "--frob"])
        #expect(flag.status == 64)
        #expect(flag.stderr.contains("Error: unknown option '--frob'"))
        #expect(flag.stderr.contains("Usage: sanad models"))
        #expect(flag.stderr.contains("See 'sanad models --help'"))
        let tier = try SanadCLI.run(["config", "--tier", "16tb"])
        #expect(tier.status == 64 && tier.stderr.contains("unknown tier '16tb'"))
    }

    @Test("backends lists the built-in engine as available")
    func backends() throws {
        let r = try SanadCLI.run(["backends", "--json"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("\"id\" : \"pure-swift\""))
        #expect(r.stdout.contains("\"available\" : true"))
    }

    @Test("config explains the tier choice; a bad config names file and key path")
    func config() throws {
        let r = try SanadCLI.run(["config", "--tier", "2gb"])
        #expect(r.stdout.contains("tier:       2gb"))
        #expect(r.stdout.contains("why:        --tier 2gb"))
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("bad.json")
        try Data(
            #"{"tier":"x","minimumMemoryMiB":1,"memoryBudgetMiB":1,"model":"m","contextLength":64,"backends":[{"id":"cuda"}]}"#
                .utf8
        ).write(to: url)
        let bad = try SanadCLI.run(["config", "--config", url.path])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(url.path) && bad.stderr.contains("backends[0].id: 'cuda' is not one of"))
        let env = try SanadCLI.run(["config"], environment: ["SANAD_CONFIG": url.path])
        #expect(env.status == 1 && env.stderr.contains("backends[0].id"))
    }

    @Test(
        "models never crashes on truncated or bit-flipped GGUF files",
        .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil))
    func hostileModels() throws {
        let source = try #require(TestPaths.model(TestPaths.smolLM2))
        let dir = try TestPaths.temporaryDirectory()
        let head = try FileHandle(forReadingFrom: source).read(upToCount: 2_000_000) ?? Data()
        try head.write(to: dir.appendingPathComponent("truncated.gguf"))
        var flipped = [UInt8](head.prefix(200_000))
        var state: UInt64 = 42
        for _ in 0..<64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let at = Int((state >> 33) % 4096)
            flipped[at] ^= UInt8(truncatingIfNeeded: state >> 17) | 1
        }
        try Data(flipped).write(to: dir.appendingPathComponent("flipped.gguf"))
        try Data("not a model".utf8).write(to: dir.appendingPathComponent("text.gguf"))
        let r = try SanadCLI.run(["models", "--models", dir.path])
        #expect(!r.crashed)
        #expect(r.status == 1)
        #expect(r.stdout.contains("truncated.gguf\n  error:"))
        #expect(r.stdout.contains("flipped.gguf\n  error:"))
        #expect(r.stdout.contains("text.gguf\n  error:         '") && r.stdout.contains("is not a GGUF file"))
        let good = try SanadCLI.run(["models", "--json", source.path])
        #expect(good.status == 0 && good.stdout.contains("\"architecture\" : \"llama\""))
    }

    @Test("models says per file which engines can run it: an architecture or pre-tokenizer the engine lacks is named")
    func enginesPerModel() throws {
        let dir = try TestPaths.temporaryDirectory()
        try PlausibleModel.writer().write(to: dir.appendingPathComponent("a-llama.gguf"))
        for (name, architecture) in [("b-qwen2", "qwen2"), ("c-mamba", "mamba")] {
            var w = PlausibleModel.writer()
            w.setLlama(
                .init(
                    architecture: architecture, layers: PlausibleModel.layers, width: PlausibleModel.dim,
                    feedForward: PlausibleModel.ffn, heads: PlausibleModel.heads, kvHeads: PlausibleModel.kvHeads))
            try w.write(to: dir.appendingPathComponent("\(name).gguf"))
        }
        var pre = PlausibleModel.writer()
        pre.set("tokenizer.ggml.pre", .string("deepseek-llm"))
        try pre.write(to: dir.appendingPathComponent("d-pre.gguf"))
        let r = try SanadCLI.run(["models", "--models", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let files = r.stdout.components(separatedBy: "\n").split { $0.hasSuffix(".gguf") }.map {
            $0.joined(separator: "\n")
        }
        #expect(files.count == 4, "\(r.stdout)")
        guard files.count == 4 else { return }
        #expect(files[0].contains("engines:       blas:") || files[0].contains("pure-swift: runs"), "\(files[0])")
        #expect(files[0].contains("pure-swift: runs (exact vs llama.cpp"), "\(files[0])")
        #expect(files[1].contains("pure-swift: runs (exact vs llama.cpp"), "qwen2 is supported: \(files[1])")
        #expect(
            files[2].contains("pure-swift: cannot: architecture 'mamba' is not supported by the pure-Swift engine")
                && files[2].contains("supported: gemma2, gemma3, llama, phi3, qwen2, qwen3")
                && files[2].contains("--backend llama"), "\(files[2])")
        #expect(files[3].contains("pure-swift: cannot:") && files[3].contains("'deepseek-llm'"), "\(files[3])")
        for file in files { #expect(file.contains("llama: "), "every engine has a line: \(file)") }
        let json = try JSONValue.parse(try SanadCLI.run(["models", "--json", "--models", dir.path]).stdout)
        let rows = json.arrayValue ?? []
        #expect(rows.count == 4 && rows[2]["engines"]?["pure-swift"]?["runs"] == .bool(false), "\(json)")
        #expect(rows.prefix(2).allSatisfy { $0["engines"]?["pure-swift"]?["runs"] == .bool(true) }, "\(json)")
    }
}
