import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// The `sanad` binary with the BLAS engine: listed, refused with a reason for a wrong `SANAD_BLAS` (and the config
/// falls back), and its F32 weights counted by `sanad config`.
@Suite("sanad with the blas backend", .serialized, .enabled(if: SanadCLI.executable != nil, "sanad is not built"))
struct BLASCLITests {
    static func blasRow(_ result: SanadCLI.Result) throws -> JSONValue {
        let rows = try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))
        return try #require(rows.arrayValue?.first { $0["id"]?.stringValue == "blas" })
    }

    @Test("sanad backends lists blas as available", .enabled(if: systemOpenBLAS != nil))
    func listedAvailable() throws {
        let result = try SanadCLI.run(["backends", "--json"], environment: ["SANAD_BLAS": ""])
        #expect(result.status == 0)
        let row = try Self.blasRow(result)
        #expect(row["available"]?.boolValue == true, "\(row)")
        #expect(row["detail"]?.stringValue?.contains("OpenBLAS") == true)
    }

    @Test("a wrong SANAD_BLAS makes blas unavailable and the config falls back", arguments: notBLAS)
    func wrongLibrary(_ path: String) throws {
        let result = try SanadCLI.run(["backends", "--json"], environment: ["SANAD_BLAS": path])
        #expect(!result.crashed && result.status == 0)
        let row = try Self.blasRow(result)
        #expect(row["available"]?.boolValue == false)
        let reason = try #require(row["reason"]?.stringValue)
        #expect(reason.contains(path) && reason.contains("apt-get install libopenblas0-pthread"))

        let config = try writeConfig(backends: #"[{"id": "blas", "why": "test"}, {"id": "pure-swift"}]"#)
        let shown = try SanadCLI.run(["config", "--config", config.path, "--json"], environment: ["SANAD_BLAS": path])
        #expect(!shown.crashed)
        let object = try JSONDecoder().decode(JSONValue.self, from: Data(shown.stdout.utf8))
        #expect(object["backend"]?.stringValue == "pure-swift", "\(shown.stdout)")
        #expect(object["backends"]?.arrayValue?.first?["why"]?.stringValue == "test")
    }

    @Test(
        "sanad config counts the cached F32 weights in the estimate",
        .enabled(if: systemOpenBLAS != nil && TestPaths.model(TestPaths.smolLM2) != nil))
    func configCountsTheCache() throws {
        let cached = try writeConfig(backends: #"[{"id": "blas", "options": {"cache-weights": true}}]"#)
        let result = try SanadCLI.run(["config", "--config", cached.path], environment: ["SANAD_BLAS": ""])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("BLAS F32 weights (cache-weights) 418 MiB"), "\(result.stdout)")
        #expect(result.stdout.contains("F32 copies cached for the session"))
        let scratch = try writeConfig(backends: #"[{"id": "blas"}]"#)
        let plain = try SanadCLI.run(["config", "--config", scratch.path], environment: ["SANAD_BLAS": ""])
        #expect(plain.stdout.contains("BLAS dequantization scratch 3.5 MiB"), "\(plain.stdout)")
    }

    /// A config for SmolLM2 at context 512 with `backends` (a JSON array).
    func writeConfig(backends: String) throws -> URL {
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("tier-blas.json")
        let text = """
            {"tier": "blas-test", "minimumMemoryMiB": 1, "memoryBudgetMiB": 4096,
             "model": "\(TestPaths.smolLM2)", "contextLength": 512, "backends": \(backends)}
            """
        try Data(text.utf8).write(to: url)
        return url
    }
}
