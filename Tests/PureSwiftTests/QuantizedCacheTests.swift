import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import Testing

// The Q8_0 KV cache (`--cache-type-k/-v q8_0`, llama.cpp's `-ctk/-ctv q8_0`) against the reference llama.cpp build
// run with the same cache types: greedy ids over 32 tokens and the top-10 logits of every step bit for bit, and
// perplexity at context 256 to 4 decimals, under every kernel build (SyntheticFidelity's checks). With a Q8_0 side
// llama.cpp takes its vector path for prompts too, so the perplexity run checks that path over 256-token batches.

/// The cache type pairs checked: both sides Q8_0 (what the tier configs offer) and each side alone.
let quantizedCachePairs: [(k: GGMLType, v: GGMLType)] = [(.q8_0, .q8_0), (.q8_0, .f16), (.f16, .q8_0)]

@Suite(
    "q8_0 KV cache against llama.cpp -ctk/-ctv", .serialized,
    .enabled(if: SyntheticFidelity.unavailable == nil, "\(SyntheticFidelity.unavailable ?? "")"))
struct QuantizedCacheFidelityTests {
    @Test(
        "synthetic llama seed 39, Q8_0 weights and the Q4_K_M mix: each cache type pair equals llama.cpp's",
        arguments: [0, 1, 2])
    func llamaSeed39(_ pair: Int) throws {
        for type in ["Q8_0", "Q4_K_M"] {
            try SyntheticFidelity.check(
                SyntheticModel.llama(), seed: 39, type: type, cache: quantizedCachePairs[pair])
        }
    }

    @Test(
        "SmolLM2 and Gemma 3 with q8_0 keys and values: greedy ids, top-10 logits and perplexity equal llama.cpp's",
        arguments: [TestPaths.smolLM2, TestPaths.gemma3])
    func shippedModels(_ name: String) throws {
        // The engine's own kernel build only: the synthetic cases above cover every build.
        let model = try #require(TestPaths.model(name), "models/\(name) is absent")
        try SyntheticFidelity.checkFile(
            model, label: name, cache: (.q8_0, .q8_0), builds: [KernelBuilds.runnable[0]])
    }

    @Test("synthetic gemma2 seed 5 (soft caps, sliding window), q8_0 keys and values: equal to llama.cpp's")
    func gemma2Seed5() throws {
        try SyntheticFidelity.check(SyntheticModel.gemma2(), seed: 5, type: "Q8_0", cache: (.q8_0, .q8_0))
    }

    @Test("synthetic qwen3 seed 3 (heads of 128), q8_0 keys and values: equal to llama.cpp's")
    func qwen3Seed3() throws {
        try SyntheticFidelity.check(SyntheticModel.qwen3(), seed: 3, type: "Q8_0", cache: (.q8_0, .q8_0))
    }
}

@Suite("q8_0 KV cache storage")
struct QuantizedCacheStorageTests {
    @Test("a cache row's Q8_0 blocks hold quantize_row_q8_0's half scale and quants")
    func blocksMatchActivationQuantization() {
        var x = [Float](repeating: 0, count: 96)
        for i in x.indices { x[i] = Float(sin(Double(i) * 0.7)) * Float(i % 7 + 1) }
        x[32..<64] = ArraySlice(repeating: 0, count: 32)  // a zero block: scale 0, quants 0
        var bytes = [UInt8](repeating: 0xFF, count: kvCacheRowBytes(.q8_0, count: 96))
        let buffer = QuantizedActivations(rows: 1, columns: 96)
        x.withUnsafeBufferPointer { source in
            bytes.withUnsafeMutableBytes { quantizeBlocksQ8_0(source.baseAddress!, count: 96, into: $0.baseAddress!) }
            buffer.prepare(source.baseAddress!, rows: 1, columns: 96, stride: 96, format: .q8_0)
        }
        #expect(bytes.count == 3 * 34)
        let row = buffer.row(0)
        for b in 0..<3 {
            let half = UInt16(bytes[34 * b]) | UInt16(bytes[34 * b + 1]) << 8
            #expect(halfToFloat(half) == row.scales[b], "block \(b) scale")
            for j in 0..<32 { #expect(Int8(bitPattern: bytes[34 * b + 2 + j]) == row.quants[32 * b + j]) }
        }
        #expect(row.scales[1] == 0 && bytes[34] == 0 && bytes[35] == 0 && bytes[36..<68].allSatisfy { $0 == 0 })
    }

    @Test("a q8_0 cache takes 34 bytes per 32 values, an f16 one 64")
    func sizes() throws {
        let half = try KVCache(layers: 2, capacity: 16, kvDimensions: 64)
        let quantized = try KVCache(layers: 2, capacity: 16, kvDimensions: 64, keyType: .q8_0, valueType: .q8_0)
        let keysOnly = try KVCache(layers: 2, capacity: 16, kvDimensions: 64, keyType: .q8_0)
        #expect(half.byteCount == 2 * 16 * 64 * 2 * 2)
        #expect(quantized.byteCount == 2 * 16 * 2 * (2 * 34))
        #expect(keysOnly.byteCount == 2 * 16 * (2 * 34 + 128))
        #expect(quantized.isHalf == false && half.isHalf)
        // Rows are disjoint: the last value row of the last layer ends at the end of the storage.
        let end = quantized.values(layer: 1, position: 15) + quantized.valueRowBytes
        #expect(end - quantized.keys(layer: 0, position: 0) == quantized.byteCount)
    }

    @Test("a cache type the engine does not store is refused naming it, the flag and the engine that takes it")
    func unsupportedType() {
        #expect {
            _ = try KVCache(layers: 1, capacity: 8, kvDimensions: 64, keyType: .q4_0)
        } throws: { error in
            let text = "\(error)"
            return text.contains("q4_0") && text.contains("--cache-type-k") && text.contains("f16, q8_0")
                && text.contains("--backend llama")
        }
    }
}
