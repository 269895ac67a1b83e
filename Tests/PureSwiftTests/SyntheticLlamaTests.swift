import SanadTestSupport
import Testing

/// The llama architecture with random weights (SanadTestSupport's `SyntheticModel.llama`, seed 39) in every weight
/// type the engine multiplies with, against the reference llama.cpp build (SyntheticFidelity's checks). The 16 cases
/// took 177 s in a debug build on a loaded 2-core machine (each runs 4 kernel builds), plus about a minute the first
/// time to write and quantize the files (kept in the temporary directory, about 0.5 GB).
@Suite(
    "synthetic llama against llama.cpp", .serialized,
    .enabled(if: SyntheticFidelity.unavailable == nil, "\(SyntheticFidelity.unavailable ?? "")"))
struct SyntheticLlamaTests {
    static let spec = SyntheticModel.llama()

    /// Every single type (`llama-quantize --pure`) and the mixes llama.cpp users download.
    static let types = SyntheticFidelity.types([
        "F32", "F16", "BF16", "Q4_0", "Q5_1", "Q8_0", "Q4_K", "Q6_K", "Q2_K", "Q3_K", "Q5_K", "IQ4_NL", "IQ4_XS",
        "Q4_K_M", "Q5_K_M", "Q3_K_M",
    ])

    @Test("llama seed 39: greedy ids, top-10 logits and perplexity equal llama.cpp's", arguments: types)
    func llamaSeed39(_ type: String) throws {
        try SyntheticFidelity.check(Self.spec, seed: 39, type: type)
    }
}
