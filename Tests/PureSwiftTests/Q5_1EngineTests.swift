import Foundation
import GGUF
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

/// SmolLM2 with every Q4_1 matrix rewritten as Q5_1 that holds the same values: q' = 2q (which sets the fifth bit
/// for q ≥ 8) and d' = d/2 (exact in half precision; a block where it is not keeps q and d), m unchanged. Both engines
/// then multiply with their Q5_1 kernels — llama.cpp's ggml_vec_dot_q5_1_q8_1, the reference build's tools run live
/// — and the pure-Swift engine must pick llama.cpp's tokens.
enum Q5_1Model {
    static let url: URL? = try? make()

    static func make() throws -> URL? {
        guard let source = TestPaths.model(TestPaths.smolLM2) else { return nil }
        let file = try GGUFFile(path: source.path)
        var w = GGUFWriter()
        w.alignment = file.alignment
        for key in file.metadataKeys {
            guard let value = file.metadata[key] else { continue }
            w.metadata.append((key, key == "general.file_type" ? .uint32(9) : value))  // LLAMA_FTYPE_MOSTLY_Q5_1
        }
        for info in file.tensors {
            let data = Array(UnsafeRawBufferPointer(start: file.data(of: info), count: info.byteCount))
            let type: GGMLType = info.type == .q4_1 ? .q5_1 : info.type
            w.tensors.append(
                GGUFWriter.Tensor(
                    name: info.name, type: type, dimensions: info.dimensions,
                    data: info.type == .q4_1 ? q5_1(fromQ4_1: data) : data))
        }
        return try w.write(to: TestPaths.temporaryDirectory().appendingPathComponent("smollm2-q5_1.gguf"))
    }

    /// The Q4_1 blocks in `bytes` as Q5_1 blocks of the same values.
    static func q5_1(fromQ4_1 bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 20 * 24)
        for b in 0..<bytes.count / 20 {
            let block = Array(bytes[(20 * b)..<(20 * b + 20)])
            let d = Float16(bitPattern: UInt16(block[0]) | UInt16(block[1]) << 8)
            let half = d / 2
            let doubled = half * 2 == d && half.isNormal
            var values = [UInt8](repeating: 0, count: 32)
            for j in 0..<16 {
                values[j] = block[4 + j] & 0x0F
                values[j + 16] = block[4 + j] >> 4
            }
            if doubled { values = values.map { $0 * 2 } }
            let scale: UInt16 = doubled ? half.bitPattern : d.bitPattern
            var qh: UInt32 = 0
            for i in 0..<32 where values[i] & 0x10 != 0 { qh |= 1 << UInt32(i) }
            out += [UInt8(scale & 0xFF), UInt8(scale >> 8), block[2], block[3]]
            for k in 0..<4 { out.append(UInt8(truncatingIfNeeded: qh >> (8 * UInt32(k)))) }
            for j in 0..<16 {
                let low: UInt8 = values[j] & 0x0F
                let high: UInt8 = (values[j + 16] & 0x0F) << 4
                out.append(low | high)
            }
        }
        return out
    }
}

@Suite(
    "Q5_1 against llama.cpp",
    .enabled(
        if: LlamaTools.reference != nil && Q5_1Model.url != nil,
        "needs the reference llama.cpp build (scripts/install-llama) and models/SmolLM2"))
struct Q5_1EngineTests {
    @Test("the rewritten model holds Q5_1 matrices whose high bits are used")
    func modelUsesFifthBit() throws {
        let file = try GGUFFile(path: try #require(Q5_1Model.url).path)
        let q5 = file.tensors.filter { $0.type == .q5_1 }
        #expect(q5.count > 100)
        let info = try #require(q5.first)
        let bytes = UnsafeRawBufferPointer(start: file.data(of: info), count: info.byteCount)
        #expect((0..<info.byteCount / 24).contains { b in (4..<8).contains { bytes[24 * b + $0] != 0 } })
    }

    @Test("greedy generation picks llama.cpp's tokens", arguments: SmolLM2Fixtures.prompts.prefix(3))
    func greedy(_ prompt: GoldenInputs.Case) async throws {
        let model = try #require(Q5_1Model.url)
        let reference = try FidelityReference.greedy(prompt, modelKey: "smollm2-q5_1", model: model)
        let session = try PureSwiftSession(
            path: model.path, options: ModelLoadOptions(threads: 2, contextLength: 512, batchSize: 512))
        let promptIDs = try session.tokenize(prompt.text, addSpecial: true, parseSpecial: true)
        #expect(promptIDs == reference.promptIDs)
        let result = try await SmolLM2Fixtures.generate(
            session, .tokens(promptIDs), GenerationParameters(maxTokens: 32, sampling: .greedy))
        #expect(result.ids == reference.ids, "against \(FidelityReference.source)")
    }
}
