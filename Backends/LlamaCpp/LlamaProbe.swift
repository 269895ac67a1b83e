import Foundation
import GGUF
import SanadCore
import SanadNative

/// The llama engine's probe (`sanad-probe llama LIBRARY`, see `NativeProbe`): in a child process, load the library
/// through the ABI guard, write a tiny llama model, and run it as the engine does — a 64-token prompt in one batch
/// (the batched matrix products, where ggml's AMX and other wide kernels run) and a few greedy tokens one at a time.
/// The weights are random blocks of the quant types real models use (Q4_0, Q4_1, Q8_0); only finite logits are
/// asked of them.
public enum LlamaProbe {
    /// The tiny model: 2 layers of width 256 (4 heads of 64 over 2 KV heads), feed-forward 512, 64 tokens.
    static let width = 256, heads = 4, kvHeads = 2, feedForward = 512, layers = 2
    static let tokens: [String] =
        (UInt8(ascii: "a")...UInt8(ascii: "z")).map { String(UnicodeScalar($0)) }
        + (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { String(UnicodeScalar($0)) }
        + (UInt8(ascii: "0")...UInt8(ascii: "8")).map { String(UnicodeScalar($0)) } + ["Ġ", "ab", "<|end|>"]
    static let promptLength = 64, generated = 4

    /// Runs the probe in this (child) process; the exit status `sanad-probe` returns. Prints `ok …` on success.
    public static func run(library: String, scratch: URL) async -> Int32 {
        let lib: LlamaLibrary
        switch LlamaLibrary.resolve(option: library, probe: false) {
        case .success(let l): lib = l
        case .failure(let error):
            FileHandle.standardError.write(Data("probe: \(error.reason)\n".utf8))
            return 3
        }
        do {
            let url = scratch.appendingPathComponent("probe-llama.gguf")
            try tinyModel().write(to: url)
            let threads = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
            let session = try LlamaSession(
                library: lib, url: url,
                options: ModelLoadOptions(threads: threads, contextLength: 128, batchSize: promptLength))
            var random = SplitMix(seed: 7)
            let prompt = (0..<promptLength).map { _ in Int32(random.next() % UInt64(tokens.count - 1)) }
            let logits = try session.evaluateLogits(prompt, rows: (promptLength - 1)..<promptLength)
            guard let last = logits.last, last.count == tokens.count, last.allSatisfy(\.isFinite) else {
                FileHandle.standardError.write(Data("probe: the prompt's logits are missing or not finite\n".utf8))
                return 4
            }
            var ids: [Int32] = []
            let stream = session.generate(
                .tokens(prompt), parameters: GenerationParameters(maxTokens: generated, sampling: .greedy))
            for try await event in stream {
                if case .token(let id, _) = event { ids.append(id) }
            }
            guard !ids.isEmpty else {
                FileHandle.standardError.write(Data("probe: no token was generated\n".utf8))
                return 4
            }
            NativeProbe.reportLoadedFiles()
            print(
                "ok computed a \(promptLength)-token prompt and \(ids.count) generated tokens of a tiny Q4_0/Q4_1/Q8_0 "
                    + "model on \(threads) threads")
            return 0
        } catch {
            FileHandle.standardError.write(Data("probe: \(error)\n".utf8))
            return 4
        }
    }

    /// The tiny model's file.
    static func tinyModel() -> GGUFWriter {
        var w = GGUFWriter()
        w.setLlama(
            .init(layers: layers, width: width, feedForward: feedForward, heads: heads, kvHeads: kvHeads))
        w.set("general.name", .string("sanad-probe"))
        w.setByteLevelBPE(tokens: tokens, merges: ["a b"], control: ["<|end|>"])
        w.set("tokenizer.ggml.bos_token_id", .uint32(UInt32(tokens.count - 1)))
        w.set("tokenizer.ggml.eos_token_id", .uint32(UInt32(tokens.count - 1)))
        var random = SplitMix(seed: 1)
        func ones(_ name: String) {
            w.tensors.append(.f32(name, [width], [Float](repeating: 1, count: width)))
        }
        func blocks(_ name: String, _ type: GGMLType, _ columns: Int, _ rows: Int) {
            w.tensors.append(
                GGUFWriter.Tensor(
                    name: name, type: type, dimensions: [columns, rows],
                    data: randomBlocks(type, count: columns / 32 * rows, &random)))
        }
        blocks("token_embd.weight", .q8_0, width, tokens.count)
        ones("output_norm.weight")
        for l in 0..<layers {
            let p = "blk.\(l)."
            let headDim = width / heads
            ones(p + "attn_norm.weight")
            blocks(p + "attn_q.weight", .q4_0, width, heads * headDim)
            blocks(p + "attn_k.weight", .q4_0, width, kvHeads * headDim)
            blocks(p + "attn_v.weight", .q4_0, width, kvHeads * headDim)
            blocks(p + "attn_output.weight", .q4_0, heads * headDim, width)
            ones(p + "ffn_norm.weight")
            blocks(p + "ffn_gate.weight", .q4_1, width, feedForward)
            blocks(p + "ffn_up.weight", .q4_1, width, feedForward)
            blocks(p + "ffn_down.weight", .q4_1, feedForward, width)
        }
        return w
    }

    /// `count` blocks of 32 weights of `type` (Q4_0, Q4_1 or Q8_0) with random quants and a small fixed scale.
    static func randomBlocks(_ type: GGMLType, count: Int, _ random: inout SplitMix) -> [UInt8] {
        let scale: [UInt8] = [0x00, 0x20]  // f16 2^-7, little-endian
        let minimum: [UInt8] = [0x00, 0xA4]  // f16 -2^-6
        var out: [UInt8] = []
        for _ in 0..<count {
            switch type {
            case .q4_1:
                out += scale + minimum
                for _ in 0..<16 { out.append(UInt8(truncatingIfNeeded: random.next())) }
            case .q8_0:
                out += scale
                for _ in 0..<32 { out.append(UInt8(truncatingIfNeeded: random.next() % 255)) }
            default:  // Q4_0
                out += scale
                for _ in 0..<16 { out.append(UInt8(truncatingIfNeeded: random.next())) }
            }
        }
        return out
    }

    /// SplitMix64: reproducible weights without Foundation's generators.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
