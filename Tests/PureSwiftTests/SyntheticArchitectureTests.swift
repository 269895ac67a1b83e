import SanadTestSupport
import Testing

// The architectures of issue 39 with random weights (SanadTestSupport's SyntheticArchitectures.swift) in every weight
// type the engine multiplies with and the three mixes (SyntheticFidelity.allTypes, the llama suite's 16), against the
// reference llama.cpp build: greedy ids over 32 tokens and the top-10 logits of every step bit for bit, perplexity at
// context 256 to 4 decimals, under every kernel build (SyntheticFidelity). The seed is in each test's name;
// SANAD_SYNTHETIC_TYPES=Q8_0,Q2_K reruns a few types.

@Suite(
    "synthetic qwen2, qwen3, Llama 3, phi3 and gemma2 against llama.cpp", .serialized,
    .enabled(if: SyntheticFidelity.unavailable == nil, "\(SyntheticFidelity.unavailable ?? "")"))
struct SyntheticArchitectureTests {
    @Test(
        "qwen2 seed 2: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: SyntheticFidelity.allTypes)
    func qwen2Seed2(_ type: String) throws { try SyntheticFidelity.check(SyntheticModel.qwen2(), seed: 2, type: type) }

    @Test(
        "qwen3 seed 3: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: SyntheticFidelity.allTypes)
    func qwen3Seed3(_ type: String) throws { try SyntheticFidelity.check(SyntheticModel.qwen3(), seed: 3, type: type) }

    @Test(
        "llama with rope_freqs seed 31: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: SyntheticFidelity.allTypes)
    func llama3Seed31(_ type: String) throws {
        try SyntheticFidelity.check(SyntheticModel.llama3(), seed: 31, type: type)
    }

    @Test(
        "phi3 seed 4: greedy ids, top-10 logits and perplexity equal llama.cpp's", arguments: SyntheticFidelity.allTypes
    )
    func phi3Seed4(_ type: String) throws { try SyntheticFidelity.check(SyntheticModel.phi3(), seed: 4, type: type) }

    @Test(
        "gemma2 seed 5: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: SyntheticFidelity.allTypes)
    func gemma2Seed5(_ type: String) throws {
        try SyntheticFidelity.check(SyntheticModel.gemma2(), seed: 5, type: type)
    }
}
