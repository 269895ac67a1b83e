import Foundation
import SanadTestSupport
import Testing

/// The synthetic-models program (Tests/synthetic-models, run by bench/synthetic-models): its usage errors, and that it
/// writes the very file the fidelity tests check (the same generator, seed and llama-quantize call), under its own
/// name, without the F32 file it was made from.
@Suite(
    "synthetic-models writes the fidelity tests' models to a folder",
    .enabled(if: SyntheticModelsProgram.executable != nil, "the synthetic-models program is not built"))
struct SyntheticModelsProgramTests {
    @Test("--help lists the families and types; a wrong type or family is a usage error (64) naming it")
    func usage() throws {
        let program = try #require(SyntheticModelsProgram.executable)
        let help = try runChildProcess(program, ["--help"])
        let text = String(decoding: help.stdout, as: UTF8.self)
        #expect(help.status == 0)
        #expect(text.contains("Usage: bench/synthetic-models") && text.contains("qwen3") && text.contains("IQ4_XS"))
        for (arguments, message) in [
            (["/tmp/unused", "Q9_9"], "unknown type 'Q9_9'"),
            (["--families", "mamba", "/tmp/unused"], "unknown family"),
            ([], "missing DIR"), (["--size", "huge", "/tmp/unused"], "unknown --size 'huge'"),
        ] {
            let r = try runChildProcess(program, arguments)
            #expect(r.status == 64, "\(arguments)")
            #expect(String(decoding: r.stderr, as: UTF8.self).contains(message), "\(arguments)")
        }
    }

    @Test(
        "--families qwen2 --size small DIR Q8_0 writes the qwen2 seed 2 file of the fidelity tests",
        .enabled(if: SyntheticModel.unavailable == nil, "\(SyntheticModel.unavailable ?? "")"))
    func writesTheTestsFile() throws {
        let program = try #require(SyntheticModelsProgram.executable)
        let directory = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let r = try runChildProcess(program, ["--families", "qwen2", "--size", "small", directory.path, "Q8_0"])
        #expect(r.status == 0, "\(String(decoding: r.stderr, as: UTF8.self))")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["qwen2-27M-seed2-Q8_0.gguf"])
        let written = try Data(contentsOf: directory.appendingPathComponent("qwen2-27M-seed2-Q8_0.gguf"))
        let tests = try Data(contentsOf: SyntheticModel.file(SyntheticModel.qwen2(), seed: 2, type: "Q8_0"))
        #expect(written == tests)
    }
}

/// Where the synthetic-models program is: next to `sanad` in the build folder.
enum SyntheticModelsProgram {
    static var executable: URL? {
        guard let sanad = SanadCLI.executable else { return nil }
        let url = sanad.deletingLastPathComponent().appendingPathComponent("synthetic-models")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }
}
