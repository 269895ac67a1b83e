import Foundation
import GGUF
import SanadCore
import SanadHost
import SanadTestSupport
import Testing

@Suite("Memory estimate of hostile models")
struct HostileEstimateTests {
    @Test(
        "the summary refuses an implausible hyperparameter, naming it and the file",
        arguments: [
            ("llama.attention.head_count_kv", GGUFValue.uint64(1 << 50)),
            ("llama.block_count", .uint64(1 << 40)),
            ("llama.attention.head_count", .uint32(.max)),
        ])
    func implausibleSummary(key: String, value: GGUFValue) throws {
        var w = PlausibleModel.writer()
        w.set(key, value)
        let file = try PlausibleModel.open(w, name: "x.gguf")
        do {
            _ = try ModelSummary(file: file)
            Issue.record("expected a refusal of \(key)")
        } catch {
            #expect("\(error)".contains("\(key) \(value) in '\(file.path)' is not plausible: at most"), "\(error)")
        }
    }

    @Test("products that overflow saturate: no trap, and no budget fits")
    func saturation() throws {
        var s = try ModelSummary(file: try PlausibleModel.open(PlausibleModel.writer()))
        s.layerCount = 1 << 40
        s.kvHeadCount = 1 << 32
        s.headCount = Int.max / 2
        let e = MemoryEstimate(model: s, contextLength: 1 << 24)
        #expect(e.kvCacheBytes == Int.max)
        #expect(e.totalBytes == Int.max)
        #expect(saturatingProduct(3, 4) == 12 && saturatingProduct(Int.max, 2) == Int.max)
        #expect(saturatingSum(Int.max, 1) == Int.max && saturatingSum(2, -5, 3) == 5)
    }

    @Test("the KV cache is counted at 2 bytes per value (every engine's cache stores F16)")
    func f16Cache() throws {
        let s = try ModelSummary(file: try PlausibleModel.open(PlausibleModel.writer()))
        let e = MemoryEstimate(model: s, contextLength: 100)
        // context × layers × KV heads × (key + value length) × 2 bytes
        #expect(e.kvCacheBytes == 100 * 2 * (1 * (16 + 16)) * 2)
    }
}
