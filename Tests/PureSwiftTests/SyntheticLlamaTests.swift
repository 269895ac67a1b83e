import SanadTestSupport
import Testing

/// The llama architecture with random weights (SanadTestSupport's `SyntheticModel.llama`, seed 39) in every weight
/// type the engine multiplies with (`SyntheticFidelity.allTypes`), against the reference llama.cpp build
/// (SyntheticFidelity's checks). The 16 cases took 177 s in a debug build on a loaded 2-core machine (each runs 4
/// kernel builds), plus about a minute the first time to write and quantize the files (kept in the temporary
/// directory, about 0.5 GB).
@Suite(
    "synthetic llama against llama.cpp", .serialized,
    .enabled(if: SyntheticFidelity.unavailable == nil, "\(SyntheticFidelity.unavailable ?? "")"))
struct SyntheticLlamaTests {
    static let spec = SyntheticModel.llama()

    @Test(
        "llama seed 39: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: SyntheticFidelity.allTypes)
    func llamaSeed39(_ type: String) throws {
        try SyntheticFidelity.check(Self.spec, seed: 39, type: type)
    }
}
