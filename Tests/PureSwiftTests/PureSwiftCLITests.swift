import Foundation
import SanadTestSupport
import Testing

// The CLI contracts of `sanad tokenize` and `sanad generate` on the pure-Swift engine.
@Suite(
    "sanad tokenize / generate (pure-swift)",
    .enabled(
        if: TestPaths.model(TestPaths.smolLM2) != nil && SanadCLI.executable != nil, "needs SmolLM2 and the built sanad"
    ))
struct PureSwiftCLITests {
    @Test("tokenize prints the ids as a JSON array on one line")
    func tokenize() throws {
        let r = try SanadCLI.run(["tokenize", "-m", TestPaths.smolLM2, "Hello my name is"])
        #expect(r.status == 0)
        #expect(r.stdout == "[19556, 957, 1462, 314]\n")
        let parsed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [Int]
        #expect(parsed == [19556, 957, 1462, 314])
        let special = try SanadCLI.run(["tokenize", "-m", TestPaths.smolLM2, "--parse-special", "<|im_start|>user"])
        #expect(special.stdout == "[1, 4093]\n")
        let literal = try SanadCLI.run(["tokenize", "-m", TestPaths.smolLM2, "<|im_start|>"])
        #expect(literal.stdout != "[1]\n")
    }

    @Test("generate streams only the continuation; stats and the stop reason go to stderr")
    func generate() throws {
        let r = try SanadCLI.run([
            "generate", "-m", TestPaths.smolLM2, "--backend", "pure-swift", "--temp", "0", "-n", "8", "-t", "2",
            "Hello my name is",
        ])
        #expect(r.status == 0)
        #expect(r.stdout == " Emily Johnson, and I'm a marketing\n")
        #expect(r.stderr.contains("stop: maxTokens"))
        #expect(r.stderr.contains("tokens/s"))
        let piped = try SanadCLI.run(
            ["generate", "-m", TestPaths.smolLM2, "--backend", "pure-swift", "--temp", "0", "-n", "8", "-"],
            stdin: "Hello my name is\n")
        #expect(piped.stdout == r.stdout)
        let stopped = try SanadCLI.run([
            "generate", "-m", TestPaths.smolLM2, "--backend", "pure-swift", "--temp", "0", "-n", "8", "--stop", "and",
            "--stop", "zzz", "Hello my name is",
        ])
        #expect(stopped.stdout == " Emily Johnson, \n")
        #expect(stopped.stderr.contains("stop: stopString"))
    }

    @Test("bad flags are usage errors (exit 64)")
    func usage() throws {
        let r = try SanadCLI.run(["generate", "-m", TestPaths.smolLM2, "--temp", "hot", "x"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Error:"))
        let none = try SanadCLI.run(["perplexity", "-m", TestPaths.smolLM2])
        #expect(none.status == 64)
    }
}
