import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import Testing

/// A tiny llama-architecture model with random weights and a ten-token byte-level BPE vocabulary, written with
/// `GGUFWriter`: 2 layers, width 32, 2 query heads sharing 1 KV head of 16, feed-forward 64.
enum TinyLlama {
    static let tokens = ["a", "b", "c", "Ġ", "ab", "bc", "abc", "aa", "Ġa", "<|end|>"]
    static let dim = 32, heads = 2, kvHeads = 1, headDim = 16, ffn = 64, layers = 2

    /// Writes the model. `architecture` replaces `general.architecture`; `types` stores the named tensors in another
    /// type (Q8_0 is quantized; other types get zero bytes of the right size).
    static func write(architecture: String = "llama", types: [String: GGMLType] = [:], drop: Set<String> = [])
        throws -> URL
    {
        var w = GGUFWriter()
        w.setLlama(
            .init(
                architecture: architecture, layers: layers, width: dim, feedForward: ffn, heads: heads,
                kvHeads: kvHeads))
        w.set("general.name", .string("tiny"))
        w.setByteLevelBPE(tokens: tokens, merges: ["a b", "b c", "ab c", "a a", "Ġ a"], control: ["<|end|>"])
        w.set("tokenizer.ggml.eos_token_id", .uint32(9))
        w.set("tokenizer.ggml.add_bos_token", .bool(false))
        var r = TestRandom(2024)
        func add(_ name: String, _ dims: [Int], scale: Float = 0.3, constant: Float? = nil) {
            guard !drop.contains(name) else { return }
            let count = dims.reduce(1, *)
            let values = (0..<count).map { _ in constant ?? r.float(-scale...scale) }
            switch types[name] {
            case nil:
                w.tensors.append(.f32(name, dims, values))
            case .q8_0?:
                w.tensors.append(
                    GGUFWriter.Tensor(name: name, type: .q8_0, dimensions: dims, data: quantizeQ8_0(values)))
            case let type?:
                let bytes = count / type.blockSize * type.blockBytes
                w.tensors.append(
                    GGUFWriter.Tensor(
                        name: name, type: type, dimensions: dims, data: [UInt8](repeating: 0, count: bytes)))
            }
        }
        add("token_embd.weight", [dim, tokens.count], scale: 1)
        add("output_norm.weight", [dim], constant: 1)
        for l in 0..<layers {
            let p = "blk.\(l)."
            add(p + "attn_norm.weight", [dim], constant: 1)
            add(p + "attn_q.weight", [dim, heads * headDim])
            add(p + "attn_k.weight", [dim, kvHeads * headDim])
            add(p + "attn_v.weight", [dim, kvHeads * headDim])
            add(p + "attn_output.weight", [heads * headDim, dim])
            add(p + "ffn_norm.weight", [dim], constant: 1)
            add(p + "ffn_gate.weight", [dim, ffn])
            add(p + "ffn_up.weight", [dim, ffn])
            add(p + "ffn_down.weight", [ffn, dim])
        }
        return try w.write(to: TestPaths.temporaryDirectory().appendingPathComponent("tiny-\(architecture).gguf"))
    }

    /// Straightforward Q8_0 quantization (d = max|x|/127, q = round(x/d)).
    static func quantizeQ8_0(_ values: [Float]) -> [UInt8] {
        var out: [UInt8] = []
        for b in 0..<values.count / 32 {
            let block = values[(32 * b)..<(32 * b + 32)]
            let d = (block.map(abs).max() ?? 0) / 127
            out += halfBytes(d)
            let stored = Float(Float16(d))
            for v in block { out.append(UInt8(bitPattern: Int8(stored == 0 ? 0 : (v / stored).rounded()))) }
        }
        return out
    }

    /// The names of the token embedding and every layer's matrices.
    static let matrices =
        ["token_embd.weight"]
        + (0..<layers).flatMap { l in
            ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"].map {
                "blk.\(l).\($0).weight"
            }
        }

    static func session(_ url: URL, context: Int = 64, batch: Int = 16) throws -> PureSwiftSession {
        try PureSwiftSession(
            path: url.path, options: ModelLoadOptions(threads: 2, contextLength: context, batchSize: batch))
    }
}

@Suite("Model loading and the engine on a tiny model")
struct ModelLoadingTests {
    @Test("an unknown architecture is a typed error listing the supported ones")
    func unknownArchitecture() async throws {
        let url = try TinyLlama.write(architecture: "mamba")
        do {
            _ = try await PureSwiftBackend().loadModel(at: url, options: ModelLoadOptions(threads: 1))
            Issue.record("loading a mamba model succeeded")
        } catch let error as PureSwiftError {
            #expect(
                error
                    == .unsupportedArchitecture(
                        path: url.path, architecture: "mamba",
                        supported: ["gemma2", "gemma3", "llama", "phi3", "qwen2", "qwen3"]))
            #expect(error.description.contains("supported: gemma2, gemma3, llama, phi3, qwen2, qwen3"))
        }
    }

    @Test("a tensor type without kernels is a typed error naming the tensor, its type and the supported types")
    func unsupportedTensorType() throws {
        let url = try TinyLlama.write(types: ["blk.1.ffn_up.weight": .mxfp4])
        #expect(
            throws: PureSwiftError.unsupportedTensorType(
                path: url.path, tensor: "blk.1.ffn_up.weight", type: "MXFP4",
                supported: WeightMatrix.supportedTypes.map(\.description))
        ) {
            _ = try TinyLlama.session(url)
        }
        #expect(WeightMatrix.supportedTypes.map(\.description).contains("Q4_1"))
    }

    @Test("a missing tensor names it")
    func missingTensor() throws {
        let url = try TinyLlama.write(drop: ["blk.0.attn_v.weight"])
        #expect(throws: GGUFError.missingTensor(path: url.path, name: "blk.0.attn_v.weight")) {
            _ = try TinyLlama.session(url)
        }
    }

    @Test("the configuration comes from the model's own keys")
    func configuration() throws {
        let file = try GGUFFile(path: try TinyLlama.write().path)
        let c = try LlamaConfiguration(file: file)
        #expect(c.layers == 2 && c.embedding == 32 && c.heads == 2 && c.kvHeads == 1 && c.headDimension == 16)
        #expect(c.vocabularySize == 10 && c.trainingContextLength == 128 && c.rope.mode == .normal)
        #expect(c.attentionScale == 0.25)
    }

    /// With Q8_0 weights, whose products llama.cpp rounds alike for one row and for a batch (ggml_vec_dot_q8_0_q8_0
    /// and tinyBLAS); F32, F16 and BF16 weights round differently in batches (tinyBLAS) than alone (ggml_vec_dot), as
    /// llama.cpp's do.
    @Test("logits of a batch equal those of the same tokens one at a time (Q8_0 weights)")
    func batchedEqualsIncremental() throws {
        let q8 = Dictionary(uniqueKeysWithValues: TinyLlama.matrices.map { ($0, GGMLType.q8_0) })
        let session = try TinyLlama.session(try TinyLlama.write(types: q8))
        let tokens: [Int32] = [0, 4, 3, 8, 2, 7, 1, 5]
        let all = try session.evaluateLogits(tokens, rows: nil)
        #expect(all.count == tokens.count && all.allSatisfy { $0.count == 10 })
        for n in 1...tokens.count {
            let last = try session.evaluateLogits(Array(tokens[..<n]), rows: (n - 1)..<n)
            #expect(last == [all[n - 1]], "prefix of \(n)")
        }
        // Batches of 3 (the session splits the input) give the same values again.
        let split = try TinyLlama.session(try TinyLlama.write(types: q8), batch: 3)
        #expect(try split.evaluateLogits(tokens, rows: 2..<6) == Array(all[2..<6]))
    }

    @Test("the same model with Q8_0 weights gives nearly the same logits")
    func quantizedWeights() throws {
        let names = TinyLlama.matrices
        let f32 = try TinyLlama.session(try TinyLlama.write())
        let q8 = try TinyLlama.session(
            try TinyLlama.write(types: Dictionary(uniqueKeysWithValues: names.map { ($0, .q8_0) })))
        let tokens: [Int32] = [0, 4, 3, 8, 2, 7]
        let a = try f32.evaluateLogits(tokens, rows: nil)
        let b = try q8.evaluateLogits(tokens, rows: nil)
        // 8-bit weights move the logits a little, not the ranking of clear winners.
        var total: Float = 0
        for (x, y) in zip(a.joined(), b.joined()) {
            #expect(abs(x - y) < 0.3)
            total += abs(x - y)
        }
        #expect(total / Float(a.count * 10) < 0.05)
        #expect(a != b)
    }

    @Test("a context too large for memory is an error naming the KV cache, not a crash")
    func contextBeyondMemory() throws {
        let url = try TinyLlama.write()
        #expect {
            _ = try TinyLlama.session(url, context: 1 << 40)
        } throws: { error in
            "\(error)".contains("out of memory") && "\(error)".contains("KV cache") && "\(error)".contains("-c")
        }
    }

    @Test("a prompt longer than the context throws promptTooLong, or keeps its end with truncation")
    func promptTooLong() async throws {
        let session = try TinyLlama.session(try TinyLlama.write(), context: 8)
        let prompt = [Int32](repeating: 4, count: 20)
        do {
            for try await _ in session.generate(.tokens(prompt), parameters: GenerationParameters(maxTokens: 2)) {}
            Issue.record("a 20-token prompt fit a context of 8")
        } catch let error as SanadError {
            #expect(error == .promptTooLong(tokens: 20, context: 8))
        }
        var finished: StopReason?
        var generated = 0
        let parameters = GenerationParameters(maxTokens: 3, sampling: .greedy, truncatePrompt: true)
        for try await event in session.generate(.tokens(prompt), parameters: parameters) {
            switch event {
            case .token: generated += 1
            case .finished(let reason, let stats):
                finished = reason
                #expect(stats.promptTokens <= 8 - 3)
            }
        }
        #expect(finished == .maxTokens || finished == .endOfGeneration)
        #expect(generated >= 1)
        #expect(throws: SanadError.promptTooLong(tokens: 9, context: 8)) {
            _ = try session.evaluateLogits([Int32](repeating: 1, count: 9), rows: nil)
        }
        #expect(throws: PureSwiftError.tokenOutOfRange(token: 10, vocabularySize: 10)) {
            _ = try session.evaluateLogits([1, 10], rows: nil)
        }
    }
}
