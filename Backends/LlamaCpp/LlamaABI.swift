#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Swift declarations of the part of llama.cpp's C API (build b11434, include/llama.h) that Sanad calls.
//
// Nothing here includes or copies the header: the structs below are written by hand to have the same memory layout
// as the pinned build's, field by field. The layout was measured with a small C program compiled against the pinned
// header that prints sizeof/offsetof of every field (see Tests/LlamaCppTests/LlamaLayoutTests.swift, which asserts
// those numbers against MemoryLayout). When llama.cpp is updated, re-measure, update these structs, the expected
// numbers in the test, and the build discriminators in LlamaABIGuard.swift.

/// `llama_token`, `llama_pos`, `llama_seq_id` are `int32_t`.
public typealias LlamaToken = Int32

/// `struct llama_model_params` (80 bytes, alignment 8 in b11434).
public struct LlamaModelParams {
    /// `ggml_backend_dev_t * devices` — NULL-terminated device list; NULL = all devices.
    public var devices: UnsafeMutableRawPointer?
    /// `const struct llama_model_tensor_buft_override * tensor_buft_overrides`.
    public var tensorBuftOverrides: UnsafeRawPointer?
    /// `int32_t n_gpu_layers` (default -1 = all).
    public var nGPULayers: Int32
    /// `enum llama_split_mode split_mode` (default 1 = LAYER).
    public var splitMode: Int32
    /// `enum llama_load_mode load_mode` (default -1 = AUTO; 1 = MMAP).
    public var loadMode: Int32
    /// `enum llama_lazy_mode lazy_mode` (default 1 = AUTO).
    public var lazyMode: Int32
    /// `int32_t main_gpu`.
    public var mainGPU: Int32
    /// `const float * tensor_split` (4 bytes of padding precede it).
    public var tensorSplit: UnsafePointer<Float>?
    /// `llama_progress_callback progress_callback`.
    public var progressCallback: (@convention(c) (Float, UnsafeMutableRawPointer?) -> Bool)?
    /// `void * progress_callback_user_data`.
    public var progressCallbackUserData: UnsafeMutableRawPointer?
    /// `const struct llama_model_kv_override * kv_overrides`.
    public var kvOverrides: UnsafeRawPointer?
    /// `bool vocab_only`.
    public var vocabOnly: Bool
    /// `bool check_tensors`.
    public var checkTensors: Bool
    /// `bool use_extra_bufts` (default true).
    public var useExtraBufts: Bool
    /// `bool no_host`.
    public var noHost: Bool
    /// `bool no_alloc`.
    public var noAlloc: Bool
    /// `bool load_mtp`.
    public var loadMTP: Bool
    /// The C struct's 2 bytes of tail padding, so that `MemoryLayout.size` equals C's `sizeof`.
    public var tailPadding: (UInt8, UInt8)
}

/// `struct llama_context_params` (160 bytes, alignment 8 in b11434).
public struct LlamaContextParams {
    /// `uint32_t n_ctx` (0 = from model).
    public var nCtx: UInt32
    /// `uint32_t n_batch`: logical maximum batch size for `llama_decode`.
    public var nBatch: UInt32
    /// `uint32_t n_ubatch`: physical maximum batch size.
    public var nUBatch: UInt32
    /// `uint32_t n_seq_max`.
    public var nSeqMax: UInt32
    /// `uint32_t n_rs_seq`: recurrent-state snapshots per sequence.
    public var nRSSeq: UInt32
    /// `uint32_t n_outputs_max` (0 = n_batch).
    public var nOutputsMax: UInt32
    /// `uint32_t n_outputs_max_per_seq` (default 1).
    public var nOutputsMaxPerSeq: UInt32
    /// `int32_t n_threads`.
    public var nThreads: Int32
    /// `int32_t n_threads_batch`.
    public var nThreadsBatch: Int32
    /// `enum llama_context_type ctx_type`.
    public var contextType: Int32
    /// `enum llama_rope_scaling_type rope_scaling_type`.
    public var ropeScalingType: Int32
    /// `enum llama_pooling_type pooling_type` (see `LlamaPoolingType`).
    public var poolingType: Int32
    /// `enum llama_attention_type attention_type`.
    public var attentionType: Int32
    /// `enum llama_flash_attn_type flash_attn_type`.
    public var flashAttentionType: Int32
    /// `float rope_freq_base`.
    public var ropeFreqBase: Float
    /// `float rope_freq_scale`.
    public var ropeFreqScale: Float
    /// `float yarn_ext_factor`.
    public var yarnExtFactor: Float
    /// `float yarn_attn_factor`.
    public var yarnAttnFactor: Float
    /// `float yarn_beta_fast`.
    public var yarnBetaFast: Float
    /// `float yarn_beta_slow`.
    public var yarnBetaSlow: Float
    /// `uint32_t yarn_orig_ctx`.
    public var yarnOrigCtx: UInt32
    /// `float defrag_thold` (deprecated).
    public var defragThreshold: Float
    /// `ggml_backend_sched_eval_callback cb_eval`.
    public var evalCallback: UnsafeRawPointer?
    /// `void * cb_eval_user_data`.
    public var evalCallbackUserData: UnsafeMutableRawPointer?
    /// `enum ggml_type type_k` (default 1 = F16).
    public var typeK: Int32
    /// `enum ggml_type type_v` (default 1 = F16).
    public var typeV: Int32
    /// `ggml_abort_callback abort_callback`.
    public var abortCallback: LlamaAbortCallback?
    /// `void * abort_callback_data`.
    public var abortCallbackData: UnsafeMutableRawPointer?
    /// `bool embeddings`.
    public var embeddings: Bool
    /// `bool offload_kqv`.
    public var offloadKQV: Bool
    /// `bool no_perf`.
    public var noPerf: Bool
    /// `bool op_offload`.
    public var opOffload: Bool
    /// `bool swa_full`.
    public var swaFull: Bool
    /// `bool kv_unified` (2 bytes of padding follow).
    public var kvUnified: Bool
    /// `struct llama_sampler_seq_config * samplers`.
    public var samplers: UnsafeMutableRawPointer?
    /// `size_t n_samplers`.
    public var nSamplers: Int
    /// `struct llama_context * ctx_other`.
    public var contextOther: OpaquePointer?
}

/// `struct llama_batch` (56 bytes): arrays of `n_tokens` entries owned by the caller.
public struct LlamaBatch {
    /// `int32_t n_tokens` (4 bytes of padding follow).
    public var nTokens: Int32
    /// `llama_token * token`.
    public var token: UnsafeMutablePointer<LlamaToken>?
    /// `float * embd`.
    public var embd: UnsafeMutablePointer<Float>?
    /// `llama_pos * pos`.
    public var pos: UnsafeMutablePointer<Int32>?
    /// `int32_t * n_seq_id`.
    public var nSeqID: UnsafeMutablePointer<Int32>?
    /// `llama_seq_id ** seq_id`.
    public var seqID: UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>?
    /// `int8_t * logits`: non-zero = output logits/embeddings for this token.
    public var logits: UnsafeMutablePointer<Int8>?

    public init(
        nTokens: Int32, token: UnsafeMutablePointer<LlamaToken>?, embd: UnsafeMutablePointer<Float>?,
        pos: UnsafeMutablePointer<Int32>?, nSeqID: UnsafeMutablePointer<Int32>?,
        seqID: UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>?, logits: UnsafeMutablePointer<Int8>?
    ) {
        self.nTokens = nTokens
        self.token = token
        self.embd = embd
        self.pos = pos
        self.nSeqID = nSeqID
        self.seqID = seqID
        self.logits = logits
    }
}

/// `struct llama_sampler_chain_params` (1 byte).
public struct LlamaSamplerChainParams {
    /// `bool no_perf`.
    public var noPerf: Bool

    public init(noPerf: Bool) { self.noPerf = noPerf }
}

/// `struct llama_token_data` (12 bytes): one candidate of a sampling step.
struct LlamaTokenData {
    /// `llama_token id`.
    var id: LlamaToken
    /// `float logit`.
    var logit: Float
    /// `float p`.
    var p: Float
}

/// `struct llama_token_data_array` (32 bytes), passed by pointer to `llama_sampler_apply`.
struct LlamaTokenDataArray {
    /// `llama_token_data * data` (a sampler may point it elsewhere).
    var data: UnsafeMutablePointer<LlamaTokenData>?
    /// `size_t size`.
    var size: Int
    /// `int64_t selected`: the index in `data` a sampler picked, -1 before.
    var selected: Int64
    /// `bool sorted`.
    var sorted: Bool
}

/// `struct llama_chat_message` (16 bytes), passed by pointer to `llama_chat_apply_template`.
public struct LlamaChatMessage {
    /// `const char * role`.
    public var role: UnsafePointer<CChar>?
    /// `const char * content`.
    public var content: UnsafePointer<CChar>?

    public init(role: UnsafePointer<CChar>?, content: UnsafePointer<CChar>?) {
        self.role = role
        self.content = content
    }
}

/// `enum llama_pooling_type`.
public enum LlamaPoolingType: Int32, Sendable, CaseIterable {
    case unspecified = -1
    case none = 0
    case mean = 1
    case cls = 2
    case last = 3
    case rank = 4

    /// The name used in configs and GGUF-adjacent tools (`mean`, `cls`, `last`, …).
    public var name: String {
        switch self {
        case .unspecified: return "unspecified"
        case .none: return "none"
        case .mean: return "mean"
        case .cls: return "cls"
        case .last: return "last"
        case .rank: return "rank"
        }
    }
}

/// `ggml_abort_callback`: `bool (*)(void * data)`; returning true aborts `llama_decode`.
public typealias LlamaAbortCallback = @convention(c) (UnsafeMutableRawPointer?) -> Bool
/// `ggml_log_callback`: `void (*)(enum ggml_log_level, const char * text, void * user_data)`.
typealias LlamaLogCallback = @convention(c) (UInt32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

// MARK: - Passing structs by value

/// The C aggregate that carries a mirrored struct across a by-value call.
///
/// Swift cannot use a Swift-declared struct in a `@convention(c)` function type (only types imported from C are
/// "representable"), and Sanad has no C target. Three functions pass or return our structs by value:
/// `llama_model_default_params`/`llama_context_default_params` (return 80/160 bytes), `llama_model_load_from_file`,
/// `llama_init_from_model` and `llama_decode` (take 80/160/56 bytes as the *last* argument).
///
/// For aggregates larger than 16 bytes both ABIs Sanad runs on fix the mechanics independently of the fields:
/// - x86-64 System V: class MEMORY. A result is written by the callee through a hidden pointer the caller supplies;
///   an argument is copied by the caller onto the stack, starting at the argument's slot.
/// - AAPCS64 (Linux and Apple arm64): a result is written through the caller's buffer in x8; an argument is copied
///   by the caller and passed as a pointer to the copy.
/// In every case the callee reads or writes exactly `sizeof(T)` bytes at offset 0 of caller-owned memory, so a C
/// aggregate that is *at least* as large (and, being a char array, never a floating-point HFA) is an exact stand-in:
/// we copy the mirrored struct into the first bytes of a zeroed carrier (or out of them), and the extra tail is
/// never touched. `utsname` is such an aggregate on every platform (390 bytes on Linux, 1280 on Darwin);
/// `LlamaCallCarrier.fits` checks the size once at load.
typealias LlamaCallCarrier = utsname

extension LlamaCallCarrier {
    /// True when the carrier can hold every struct passed by value (checked before any call).
    static var fits: Bool {
        let needed = max(
            MemoryLayout<LlamaModelParams>.size, MemoryLayout<LlamaContextParams>.size, MemoryLayout<LlamaBatch>.size)
        return MemoryLayout<LlamaCallCarrier>.size >= needed && needed > 16
    }

    /// A zeroed carrier holding `value`'s bytes at offset 0.
    static func wrapping<T>(_ value: T) -> LlamaCallCarrier {
        var carrier = LlamaCallCarrier()
        withUnsafeMutableBytes(of: &carrier) { raw in
            withUnsafeBytes(of: value) { src in
                raw.copyMemory(from: src)
            }
        }
        return carrier
    }

    /// The first `MemoryLayout<T>.size` bytes, as raw bytes (checked before they are read as `T`).
    func leadingBytes<T>(as type: T.Type) -> [UInt8] {
        withUnsafeBytes(of: self) { Array($0.prefix(MemoryLayout<T>.size)) }
    }
}

/// Reads a `T` from the start of `bytes` (which must hold at least `MemoryLayout<T>.size` bytes).
func loadStruct<T>(_ type: T.Type, from bytes: [UInt8]) -> T {
    bytes.withUnsafeBytes { $0.loadUnaligned(as: T.self) }
}

// MARK: - Function types

// Every function Sanad calls, as the b11434 header declares it. Opaque C structs (llama_model, llama_context,
// llama_vocab, llama_sampler, llama_memory_i) are `OpaquePointer`.
typealias FnVoid = @convention(c) () -> Void
typealias FnVersion = @convention(c) () -> UnsafePointer<CChar>?
typealias FnLogSet = @convention(c) (LlamaLogCallback?, UnsafeMutableRawPointer?) -> Void
typealias FnDefaultParams = @convention(c) () -> LlamaCallCarrier
typealias FnModelLoad = @convention(c) (UnsafePointer<CChar>, LlamaCallCarrier) -> OpaquePointer?
typealias FnModelFree = @convention(c) (OpaquePointer?) -> Void
typealias FnInitFromModel = @convention(c) (OpaquePointer, LlamaCallCarrier) -> OpaquePointer?
typealias FnFree = @convention(c) (OpaquePointer?) -> Void
typealias FnModelGetVocab = @convention(c) (OpaquePointer) -> OpaquePointer?
typealias FnModelInt32 = @convention(c) (OpaquePointer) -> Int32
typealias FnModelUInt64 = @convention(c) (OpaquePointer) -> UInt64
typealias FnModelChatTemplate = @convention(c) (OpaquePointer, UnsafePointer<CChar>?) -> UnsafePointer<CChar>?
typealias FnModelMetaValStr =
    @convention(c) (
        OpaquePointer, UnsafePointer<CChar>, UnsafeMutablePointer<CChar>?, Int
    ) -> Int32
typealias FnModelDesc = @convention(c) (OpaquePointer, UnsafeMutablePointer<CChar>?, Int) -> Int32
typealias FnContextUInt32 = @convention(c) (OpaquePointer) -> UInt32
typealias FnContextInt32 = @convention(c) (OpaquePointer) -> Int32
typealias FnGetMemory = @convention(c) (OpaquePointer) -> OpaquePointer?
typealias FnMemoryClear = @convention(c) (OpaquePointer?, Bool) -> Void
typealias FnMemorySeqPos = @convention(c) (OpaquePointer?, Int32) -> Int32
/// `llama_memory_seq_rm(mem, seq_id, p0, p1)`: false only for a partial removal a recurrent model cannot do.
typealias FnMemorySeqRm = @convention(c) (OpaquePointer?, Int32, Int32, Int32) -> Bool
typealias FnVocabInt32 = @convention(c) (OpaquePointer) -> Int32
typealias FnVocabBool = @convention(c) (OpaquePointer) -> Bool
typealias FnVocabTokenBool = @convention(c) (OpaquePointer, LlamaToken) -> Bool
typealias FnTokenize =
    @convention(c) (
        OpaquePointer, UnsafePointer<CChar>, Int32, UnsafeMutablePointer<LlamaToken>?, Int32, Bool, Bool
    ) -> Int32
typealias FnTokenToPiece =
    @convention(c) (
        OpaquePointer, LlamaToken, UnsafeMutablePointer<CChar>?, Int32, Int32, Bool
    ) -> Int32
/// The `const struct llama_chat_message *` argument is a raw pointer to `LlamaChatMessage`s (a pointer to a
/// Swift-declared struct is not C-representable either; the pointee layout is what matters).
typealias FnChatApplyTemplate =
    @convention(c) (
        UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Bool, UnsafeMutablePointer<CChar>?, Int32
    ) -> Int32
typealias FnDecode = @convention(c) (OpaquePointer, LlamaCallCarrier) -> Int32
typealias FnSetAbortCallback = @convention(c) (OpaquePointer, LlamaAbortCallback?, UnsafeMutableRawPointer?) -> Void
typealias FnGetFloats = @convention(c) (OpaquePointer, Int32) -> UnsafeMutablePointer<Float>?
typealias FnSetNThreads = @convention(c) (OpaquePointer, Int32, Int32) -> Void
/// `llama_attach_threadpool(ctx, threadpool, threadpool_batch)`.
typealias FnAttachThreadpool = @convention(c) (OpaquePointer, OpaquePointer?, OpaquePointer?) -> Void
/// ggml's `ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads)`: the struct (528 bytes in
/// ggml 0.26.0: a 512-entry CPU mask, thread count, priority, polling level, two flags) is never read by Sanad, so
/// it travels as a raw buffer that `ggmlThreadpoolParamsBytes` bounds.
typealias FnThreadpoolParamsInit = @convention(c) (UnsafeMutableRawPointer, Int32) -> Void
/// `ggml_threadpool_new(struct ggml_threadpool_params * params)`.
typealias FnThreadpoolNew = @convention(c) (UnsafeMutableRawPointer) -> OpaquePointer?
/// `ggml_threadpool_free(struct ggml_threadpool * threadpool)`.
typealias FnThreadpoolFree = @convention(c) (OpaquePointer?) -> Void

/// Room for `struct ggml_threadpool_params` (528 bytes in ggml 0.26.0), with a margin.
let ggmlThreadpoolParamsBytes = 2048
/// `llama_sampler_chain_init(struct llama_sampler_chain_params)`: the 1-byte struct travels like a `bool`
/// (in the low byte of the first integer register on x86-64 System V and AAPCS64).
typealias FnSamplerChainInit = @convention(c) (Bool) -> OpaquePointer?
typealias FnSamplerChainAdd = @convention(c) (OpaquePointer, OpaquePointer?) -> Void
typealias FnSamplerNoArgs = @convention(c) () -> OpaquePointer?
typealias FnSamplerInt32 = @convention(c) (Int32) -> OpaquePointer?
typealias FnSamplerUInt32 = @convention(c) (UInt32) -> OpaquePointer?
typealias FnSamplerFloat = @convention(c) (Float) -> OpaquePointer?
typealias FnSamplerFloatKeep = @convention(c) (Float, Int) -> OpaquePointer?
typealias FnSamplerPenalties = @convention(c) (Int32, Int32, Float, Float, Float) -> OpaquePointer?
/// `llama_sampler_init_grammar(vocab, grammar_str, grammar_root)`: NULL when libllama refuses the grammar.
typealias FnSamplerInitGrammar =
    @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafePointer<CChar>) -> OpaquePointer?
/// `llama_sampler_apply(smpl, llama_token_data_array * cur_p)`: the array is a raw pointer to a
/// `LlamaTokenDataArray` (a pointer to a Swift-declared struct is not C-representable).
typealias FnSamplerApply = @convention(c) (OpaquePointer, UnsafeMutableRawPointer) -> Void
typealias FnSamplerAccept = @convention(c) (OpaquePointer, LlamaToken) -> Void
typealias FnSamplerReset = @convention(c) (OpaquePointer) -> Void
typealias FnSamplerFree = @convention(c) (OpaquePointer?) -> Void
