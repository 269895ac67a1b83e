import Foundation
import GGUF
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

@Suite("Pure-Swift engine: hostile models are refused before loading")
struct HostileModelTests {
    @Test(
        "nonsense the engine once accepted is refused, naming the key or tensor and the file",
        arguments: [
            ("llama.attention.layer_norm_rms_epsilon", GGUFValue.float32(-1e-5), "not plausible"),
            ("tokenizer.ggml.bos_token_id", .string("7"), "tokenizer.ggml.bos_token_id"),
            ("llama.block_count", .uint32(0), "at least 1"),
        ])
    func refused(key: String, value: GGUFValue, expected: String) throws {
        var w = PlausibleModel.writer()
        w.set(key, value)
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("hostile.gguf")
        try w.write(to: url)
        do {
            _ = try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: 1, contextLength: 32))
            Issue.record("\(key) = \(value) was accepted")
        } catch {
            #expect("\(error)".contains(key) && "\(error)".contains(url.path), "\(error)")
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test("a tensor whose declared type was swapped is refused by the registry")
    func swappedType() throws {
        var w = PlausibleModel.writer()
        let index = try #require(w.tensors.firstIndex { $0.name == "blk.1.ffn_up.weight" })
        w.tensors[index].type = .f16
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("swapped.gguf")
        try w.write(to: url)
        let file = try GGUFFile(path: url.path)
        #expect(throws: GGUFError.self) { _ = try ArchitectureRegistry.load(file) }
    }
}
