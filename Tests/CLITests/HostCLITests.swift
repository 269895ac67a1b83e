import Foundation
import SanadTestSupport
import Testing

/// A config in a temporary folder (no plugins), with `changes` applied to a working 4gb-like setup.
func temporaryConfig(_ fields: [String: String] = [:]) throws -> URL {
    var values: [String: String] = [
        "tier": "\"test\"", "minimumMemoryMiB": "0", "memoryBudgetMiB": "768",
        "model": "\"\(TestPaths.smolLM2)\"", "contextLength": "512", "backends": "[{\"id\": \"pure-swift\"}]",
    ]
    for (k, v) in fields { values[k] = v }
    let text = "{" + values.keys.sorted().map { "\"\($0)\": \(values[$0] ?? "null")" }.joined(separator: ", ") + "}"
    let url = try TestPaths.temporaryDirectory().appendingPathComponent("tier-test.json")
    try Data(text.utf8).write(to: url)
    return url
}

@Suite("sanad: exit codes, config checks, opening a model", .enabled(if: SanadCLI.executable != nil))
struct HostCLITests {
    @Test(
        "usage errors exit 64",
        arguments: [
            ["generate", "--backend", "cuda", "hi"],
            ["generate", "--chat", "--template", "bogus", "hi"],
            ["chat", "--template", "bogus"],
            ["generate", "--temp", "-1", "hi"],
            ["tokenize", "--backend", "cuda", "hi"],
            ["perplexity", "--backend", "cuda", "-f", "x.txt"],
        ])
    func usage(arguments: [String]) throws {
        let r = try SanadCLI.run(arguments, stdin: "")
        #expect(r.status == 64, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains("Error: ") && r.stderr.contains("See 'sanad \(arguments[0]) --help'"))
    }

    @Test("models with a folder that does not exist fails, naming it")
    func missingModelsFolder() throws {
        let r = try SanadCLI.run(["models", "--models", "/nonexistent-sanad-models"])
        #expect(r.status == 1 && r.stderr.contains("/nonexistent-sanad-models"), "\(r.stderr)")
    }

    @Test("config exits 1 when the model is missing or no engine can run")
    func configCannotRun() throws {
        let missing = try SanadCLI.run(["config", "--config", try temporaryConfig(["model": "\"absent.gguf\""]).path])
        #expect(missing.status == 1, "\(missing.stdout)")
        let noEngine = try SanadCLI.run(
            ["config", "--config", try temporaryConfig().path], environment: ["SANAD_KERNELS": "bogus"])
        #expect(noEngine.status == 1 && noEngine.stdout.contains("none available"), "\(noEngine.stdout)")
        #expect(noEngine.stdout.contains("bogus"))
    }

    @Test("a bad SANAD_KERNELS makes pure-swift unavailable with the reason")
    func badKernels() throws {
        let r = try SanadCLI.run(["backends"], environment: ["SANAD_KERNELS": "bogus"])
        #expect(r.stdout.contains("pure-swift") && r.stdout.contains("no kernel build 'bogus'"), "\(r.stdout)")
    }

    @Test(
        "absurd config numbers are refused naming the key, never a trap",
        arguments: [
            ("contextLength", "9e14"), ("contextLength", "5e9"), ("memoryBudgetMiB", "1e13"), ("threads", "5e9"),
        ])
    func absurdNumbers(key: String, value: String) throws {
        let r = try SanadCLI.run(["config", "--config", try temporaryConfig([key: value]).path])
        #expect(!r.crashed && r.status == 1, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains(": \(key): ") && r.stderr.contains("out of range"), "\(r.stderr)")
    }

    @Test("a config with a trailing comma is refused with line and column")
    func trailingComma() throws {
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("tier-x.json")
        try Data("{\"tier\": \"x\",\n}".utf8).write(to: url)
        let r = try SanadCLI.run(["config", "--config", url.path])
        #expect(r.status == 1 && r.stderr.contains("line 2, column 1: trailing comma"), "\(r.stderr)")
    }

    @Test("an unknown engine option is refused at config load with its key path")
    func engineOption() throws {
        let url = try temporaryConfig(["backends": "[{\"id\": \"pure-swift\", \"options\": {\"kernel\": \"avx2\"}}]"])
        let r = try SanadCLI.run(["config", "--config", url.path])
        #expect(
            r.status == 1 && r.stderr.contains("backends[0].options") && r.stderr.contains("'kernel'"), "\(r.stderr)")
    }

    @Test("generate refuses a context over the tier's budget with the estimate, and one past the training context")
    func generateChecks() throws {
        guard let model = TestPaths.model(TestPaths.smolLM2) else { return }
        let small = try temporaryConfig(["memoryBudgetMiB": "60"])
        let r = try SanadCLI.run(["generate", "--config", small.path, "-m", model.path, "-n", "1", "hi"])
        #expect(r.status == 1 && r.stderr.contains("needs about") && r.stderr.contains("KV cache"), "\(r.stderr)")
        let long = try SanadCLI.run([
            "generate", "--config", try temporaryConfig().path, "-m", model.path, "-c", "32768", "-n", "1", "hi",
        ])
        #expect(long.status == 1 && long.stderr.contains("training context of 8192"), "\(long.stderr)")
        #expect(long.stderr.contains("--allow-long-context"))
    }

    @Test("tokenize goes through an engine like every command")
    func tokenize() throws {
        guard let model = TestPaths.model(TestPaths.smolLM2) else { return }
        let r = try SanadCLI.run(["tokenize", "--config", try temporaryConfig().path, "-m", model.path, "Hello world"])
        #expect(r.status == 0 && r.stdout.hasPrefix("["), "\(r.stderr)")
        let small = try temporaryConfig(["memoryBudgetMiB": "10"])
        let refused = try SanadCLI.run(["tokenize", "--config", small.path, "-m", model.path, "Hello"])
        #expect(refused.status == 1 && refused.stderr.contains("needs about"), "\(refused.stderr)")
        let forced = try SanadCLI.run(
            ["tokenize", "--config", small.path, "-m", model.path, "--no-memory-check", "Hello world"])
        #expect(forced.status == 0 && forced.stdout == r.stdout, "\(forced.stderr)")
    }

    @Test("the first SIGINT stops generate cleanly: newline, statistics, exit 130")
    func interrupt() throws {
        guard let model = TestPaths.model(TestPaths.smolLM2), let exe = SanadCLI.executable else { return }
        let process = Process()
        process.executableURL = exe
        process.arguments = [
            "generate", "--config", try temporaryConfig().path, "-m", model.path, "-n", "100000", "-c", "8192",
            "--temp", "0", "Once upon a time",
        ]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Wait for the first generated bytes, then interrupt.
        var first = Data()
        while first.isEmpty && process.isRunning { first = out.fileHandleForReading.availableData }
        process.interrupt()
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(errors)")
        #expect(String(decoding: first + rest, as: UTF8.self).hasSuffix("\n"))
        #expect(errors.contains("stop: cancelled (interrupted)"), "\(errors)")
    }
}
