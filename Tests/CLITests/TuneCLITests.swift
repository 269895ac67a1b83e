import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad tune` end to end on the tier's model: it measures, writes the order to the tuning folder (not the
/// repo's configs), `sanad config` shows it, `--no-tuning` and a stale file fall back to the tier file, `--clear`
/// removes it.
@Suite("sanad tune", .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct TuneCLITests {
    @Test("measures the engines, writes the order, and config follows it until cleared")
    func tuneAndConfig() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["SANAD_TUNING_DIR": dir.path]
        let tier = ["--tier", "4gb"]
        let tune = try SanadCLI.run(
            ["tune", "-r", "1", "-t", "1", "--backends", "pure-swift,blas"] + tier, environment: env)
        #expect(tune.status == 0, "\(tune.stderr)")
        #expect(tune.stdout.contains("chat turn") && tune.stdout.contains("pure-swift"), "\(tune.stdout)")
        let file = dir.appendingPathComponent("tier-4gb.json")
        let saved = try JSONValue.parse(String(decoding: try Data(contentsOf: file), as: UTF8.self))
        let order = try #require(saved["engines"]?.arrayValue).compactMap { $0["id"]?.stringValue }
        #expect(Set(order) == ["pure-swift", "blas"], "\(saved)")
        #expect(saved["engines"]?.arrayValue?.first?["why"]?.stringValue?.contains("chat turn pp64+tg32") == true)

        let config = try SanadCLI.run(["config", "--json"] + tier, environment: env)
        let c = try JSONValue.parse(config.stdout)
        #expect(c["order"]?["source"]?.stringValue == "tuning", "\(config.stdout)")
        #expect(c["backends"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.prefix(2).elementsEqual(order) == true)

        let plain = try JSONValue.parse(
            try SanadCLI.run(["config", "--json", "--no-tuning"] + tier, environment: env).stdout)
        #expect(plain["order"]?["source"]?.stringValue == "tier file")

        // A tuning for another model no longer applies, and config says why.
        var stale = saved.objectValue ?? [:]
        stale["model"] = .string("another-model.gguf")
        try Data(JSONValue.object(stale).prettyString.utf8).write(to: file)
        let staleConfig = try SanadCLI.run(["config"] + tier, environment: env)
        #expect(staleConfig.stdout.contains("not applied") && staleConfig.stdout.contains("another-model.gguf"))

        let clear = try SanadCLI.run(["tune", "--clear"] + tier, environment: env)
        #expect(clear.status == 0 && !FileManager.default.fileExists(atPath: file.path), "\(clear.stderr)")
    }

    @Test("an unknown engine is a usage error")
    func unknownEngine() throws {
        let r = try SanadCLI.run(["tune", "--backends", "cuda"])
        #expect(r.status == 64 && r.stderr.contains("cuda"), "\(r.stderr)")
    }
}
