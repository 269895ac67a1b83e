import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// What a llama.cpp user types (issue 44): -p, a random seed that is printed, inline --json-schema and --grammar
/// beside their -file forms, and --version naming the engines' builds.
@Suite("llama-cli habits", .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct LlamaCLIHabitsTests {
    let model = ["-m", TestPaths.smolLM2, "--backend", "pure-swift"]

    func seed(_ stderr: String) -> String? {
        stderr.components(separatedBy: "seed: ").last?.split(separator: "\n").first.map(String.init)
    }

    @Test("-p is the prompt; without --seed each run draws one and prints it, --seed N repeats a run")
    func promptAndSeed() throws {
        let positional = try SanadCLI.run(
            ["generate"] + model + ["--temp", "0", "-n", "6", "The capital of France is"])
        let flag = try SanadCLI.run(
            ["generate"] + model + ["--temp", "0", "-n", "6", "-p", "The capital of France is"])
        #expect(flag.status == 0 && flag.stdout == positional.stdout && !flag.stdout.isEmpty, "\(flag.stderr)")
        let both = try SanadCLI.run(["generate"] + model + ["-p", "a", "b"])
        #expect(both.status == 64 && both.stderr.contains("one way"), "\(both.stderr)")
        let sampled = try (0..<2).map { _ in try SanadCLI.run(["generate"] + model + ["-n", "8", "-p", "Once upon a"]) }
        let seeds = sampled.compactMap { seed($0.stderr) }
        #expect(seeds.count == 2 && seeds[0] != seeds[1], "two runs, two seeds: \(seeds)")
        let fixed = try (0..<2).map { _ in
            try SanadCLI.run(["generate"] + model + ["-n", "8", "--seed", "5", "-p", "Once upon a"])
        }
        #expect(fixed[0].stdout == fixed[1].stdout && seed(fixed[0].stderr) == "5", "\(fixed[0].stderr)")
    }

    @Test("--json-schema takes the schema inline or a file, -jf a file: the same output; --grammar inline or -file")
    func inlineConstraints() throws {
        let schema = #"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("schema.json")
        try schema.write(to: file, atomically: true, encoding: .utf8)
        let base = ["generate"] + model + ["--temp", "0", "-n", "24", "-p", "Is the sky blue? Answer in JSON."]
        let inline = try SanadCLI.run(base + ["--json-schema", schema])
        let jf = try SanadCLI.run(base + ["-jf", file.path])
        let old = try SanadCLI.run(base + ["--json-schema", file.path])
        #expect(
            inline.status == 0 && (try? JSONValue.parse(inline.stdout))?["ok"]?.boolValue != nil, "\(inline.stdout)")
        #expect(jf.stdout == inline.stdout && old.stdout == inline.stdout)
        let bad = try SanadCLI.run(base + ["--json-schema", #"{"type": "#])
        #expect(bad.status == 64 && bad.stderr.contains("the inline schema"), "\(bad.stderr)")
        let two = try SanadCLI.run(base + ["--json-schema", schema, "--grammar", #"root ::= "a""#])
        #expect(two.status == 64 && two.stderr.contains("exclude each other"), "\(two.stderr)")
        // A grammar is the llama engine's: inline or from a file, the pure-Swift engine says so.
        let grammarFile = dir.appendingPathComponent("yes.gbnf")
        try #"root ::= "yes" | "no""#.write(to: grammarFile, atomically: true, encoding: .utf8)
        for flags in [["--grammar", #"root ::= "yes" | "no""#], ["--grammar-file", grammarFile.path]] {
            let r = try SanadCLI.run(base + flags)
            #expect(r.status != 0 && r.stderr.contains("llama engine only"), "\(flags): \(r.stderr)")
        }
    }

    @Test("--version names Sanad's version and every engine's build or why it is unavailable")
    func version() throws {
        let r = try SanadCLI.run(["--version"])
        #expect(r.status == 0 && r.stdout.hasPrefix("sanad "), "\(r.stdout)")
        for engine in ["pure-swift: built in; kernels: ", "blas: ", "llama: ", "openai: "] {
            #expect(r.stdout.contains("\n  " + engine), "\(engine): \(r.stdout)")
        }
    }
}
