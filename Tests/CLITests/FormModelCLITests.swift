import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad form answer --provider model` and `sanad form eval` without a model: the rules provider's scores on the
/// evaluation set, the fallback with a notice when the model cannot be opened, and usage errors.
@Suite("sanad form: model provider and eval", .enabled(if: SanadCLI.executable != nil))
struct FormModelCLITests {
    func form(_ args: [String], stdin: String? = nil) throws -> SanadCLI.Result {
        try SanadCLI.run(["form"] + args + ["--now", "2026-11-24"], stdin: stdin)
    }

    @Test("eval scores the rules provider on the evaluation set as a Markdown table")
    func evalRules() throws {
        let r = try form(["eval", TestPaths.fixture("forms-eval/utterances.json").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("| provider | engine | model | utterances | slice | precision | recall | F1 |"))
        #expect(r.stdout.contains("| rules | - | - | 68 | all | "), "\(r.stdout)")
    }

    @Test("a model that cannot be opened: the rules provider answers and a note says so")
    func missingModelFallsBack() throws {
        let store = try TestPaths.temporaryDirectory().path
        #expect(try form(["start", "dmv-renewal", "--id", "m", "--store", store], stdin: "yes\nCA\n").status == 0)
        let r = try form([
            "answer", "m", "Emily Stone", "--store", store, "--provider", "model", "-m", "no-such-model.gguf", "--yes",
        ])
        #expect(r.stdout.contains("used the rules provider"), "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("✓ saved fullName = Emily Stone"), "\(r.stdout)")
    }

    @Test(
        "a conversation with --provider model: each answer goes through the provider (here a missing model, so rules)")
    func conversationWithProvider() throws {
        let store = try TestPaths.temporaryDirectory().path
        let r = try form(
            [
                "start", "dmv-renewal", "--id", "c", "--store", store, "--provider", "model", "-m",
                "no-such-model.gguf", "--yes",
            ],
            stdin: "yes\nCA\n/quit\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.components(separatedBy: "used the rules provider").count - 1 == 2, "\(r.stdout)")
        #expect(r.stdout.contains("✓ saved consent = yes") && r.stdout.contains("✓ saved state = CA"), "\(r.stdout)")
    }

    @Test("model options without --provider model, and an unknown provider, are usage errors")
    func usage() throws {
        for args in [
            ["eval", "x.json", "-m", "a.gguf"], ["eval", "x.json", "--max-tokens", "64"],
            ["answer", "s", "t", "--provider", "oracle"], ["review", "s", "--provider", "model"],
        ] {
            #expect(try form(args).status == 64, "\(args)")
        }
    }
}
