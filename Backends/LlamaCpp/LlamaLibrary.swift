import Foundation
import GGUF
import SanadFiles
import SanadNative

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where to look for libllama, in order. The first source that names a file decides: a path given in the config or
/// in `SANAD_LIBLLAMA` is used alone (a person pointed at that file on purpose; quietly loading another one would
/// hide the mistake). With neither, the system loader's search (`libllama.so`) and then the default install prefix
/// are tried.
public enum LlamaLibraryLocator {
    /// The environment variable that names the library file.
    public static let environmentVariable = "SANAD_LIBLLAMA"
    /// The file `scripts/install-llama` installs.
    public static let defaultPath = "/usr/local/lib/libllama.so"
    /// The name handed to the system loader (`dlopen` searches LD_LIBRARY_PATH, the ld.so cache, …).
    public static let systemName = "libllama.so"

    /// The search as `NativeLibrary` runs it: a named file alone, else the system loader, then the default prefix.
    public static let spec = NativeLibrarySpec(
        displayName: "libllama (\(LlamaABIGuard.expectedBuild))", environmentVariable: environmentVariable,
        systemNames: [systemName, defaultPath], installHint: LlamaABIGuard.installHint)

    /// The candidates for `option` (the config's `library` / the backend's init parameter) and `environment`.
    public static func candidates(option: String?, environment: [String: String]) -> [NativeLibrarySpec.Candidate] {
        spec.candidates(option: option, environment: environment)
    }
}

/// A libllama that passed `LlamaABIGuard`, with the functions Sanad calls. Loaded once per path and never unloaded
/// (libllama keeps process-wide state such as its thread pools and log callback).
final class LlamaLibrary: @unchecked Sendable {  // @unchecked: function pointers and defaults are immutable after init
    /// The file that was loaded (resolved through `dladdr` when the system loader found it).
    let path: String
    let version: String
    /// `llama_model_default_params()`, verified.
    let modelDefaults: LlamaModelParams
    /// `llama_context_default_params()`, verified.
    let contextDefaults: LlamaContextParams

    private let native: NativeLibrary

    let modelLoadFromFile: FnModelLoad
    let modelFree: FnModelFree
    let initFromModel: FnInitFromModel
    let free: FnFree
    let modelGetVocab: FnModelGetVocab
    let modelNCtxTrain: FnModelInt32
    let modelNEmbd: FnModelInt32
    let modelNParams: FnModelUInt64
    let modelSize: FnModelUInt64
    let modelChatTemplate: FnModelChatTemplate
    let modelMetaValStr: FnModelMetaValStr
    let modelDesc: FnModelDesc
    let nCtx: FnContextUInt32
    let nCtxSeq: FnContextUInt32
    let nBatch: FnContextUInt32
    let nUBatch: FnContextUInt32
    let poolingType: FnContextInt32
    let getMemory: FnGetMemory
    let memoryClear: FnMemoryClear
    let memorySeqPosMax: FnMemorySeqPos
    let memorySeqRm: FnMemorySeqRm
    let vocabNTokens: FnVocabInt32
    let vocabBOS: FnVocabInt32
    let vocabGetAddBOS: FnVocabBool
    let vocabIsEOG: FnVocabTokenBool
    let tokenizeFn: FnTokenize
    let tokenToPiece: FnTokenToPiece
    let chatApplyTemplate: FnChatApplyTemplate
    let decodeFn: FnDecode
    let setAbortCallback: FnSetAbortCallback
    let getLogitsIth: FnGetFloats
    let getEmbeddingsSeq: FnGetFloats
    let getEmbeddingsIth: FnGetFloats
    let samplerChainInit: FnSamplerChainInit
    let samplerChainAdd: FnSamplerChainAdd
    let samplerInitGreedy: FnSamplerNoArgs
    let samplerInitDist: FnSamplerUInt32
    let samplerInitTopK: FnSamplerInt32
    let samplerInitTopP: FnSamplerFloatKeep
    let samplerInitMinP: FnSamplerFloatKeep
    let samplerInitTemp: FnSamplerFloat
    let samplerInitPenalties: FnSamplerPenalties
    let samplerInitGrammar: FnSamplerInitGrammar
    let samplerApply: FnSamplerApply
    let samplerAccept: FnSamplerAccept
    let samplerReset: FnSamplerReset
    let samplerFree: FnSamplerFree
    let attachThreadpool: FnAttachThreadpool
    /// ggml's CPU thread pool functions, found through libllama's handle in the ggml libraries it loads; nil when
    /// that build does not export them (contexts then run with ggml's pool per computation).
    private let threadpoolParamsInit: FnThreadpoolParamsInit?
    private let threadpoolNew: FnThreadpoolNew?
    private let threadpoolFree: FnThreadpoolFree?

    // MARK: Loading

    /// The verified library for the first usable candidate (opened once per path), or the reasons none is usable.
    /// With `probe` (always, but in the probe's own child process) a library that passes the ABI guard is also run
    /// in a child process first (`NativeProbe`, `LlamaProbe`): one that dies, hangs or fails there is refused with
    /// what happened, before anything in this process computes with it.
    static func resolve(
        option: String?, environment: [String: String] = ProcessInfo.processInfo.environment, probe: Bool = true
    )
        -> Result<LlamaLibrary, LlamaCppError>
    {
        NativeLibrary.load(
            LlamaLibraryLocator.spec, option: option, environment: environment, precheck: precheck,
            make: { make($0, probe: probe, environment: environment) }
        ).mapError { .libraryUnavailable($0.reason) }
    }

    /// The probe's verdict on the library at `path` (cached per file digest and CPU; see `NativeProbe`).
    static func probeVerdict(path: String, environment: [String: String]) -> NativeProbe.Verdict {
        NativeProbe.verdict(kind: "llama", library: path, environment: environment)
    }

    /// Verifies an opened library (`LlamaABIGuard`), proves it computes (`probe`), and resolves the functions
    /// Sanad calls.
    private static func make(_ native: NativeLibrary, probe: Bool, environment: [String: String])
        -> Result<LlamaLibrary, NativeLibraryError>
    {
        switch verify(native) {
        case .failure(let error):
            return .failure(NativeLibraryError(error.reason))
        case .success(let defaults):
            if probe {
                let verdict = probeVerdict(path: native.path, environment: environment)
                guard verdict.passed else {
                    return .failure(
                        NativeLibraryError(
                            NativeProbe.refusal(displayName: "libllama", library: native.shownPath, verdict: verdict)
                                + ". Rebuild it with scripts/install-llama --force (each build is smoke-tested and "
                                + "rebuilt without the instruction-set extensions that crash; a rebuilt library is "
                                + "probed again), or use another engine"))
                }
            }
            do {
                return .success(
                    try LlamaLibrary(
                        native: native, version: defaults.version, modelDefaults: defaults.model,
                        contextDefaults: defaults.context))
            } catch let error as LlamaCppError {
                return .failure(NativeLibraryError(error.reason))
            } catch {
                return .failure(NativeLibraryError("\(native.shownPath): \(error)"))
            }
        }
    }

    /// The symbol checks on the file itself, before it is loaded (see `ELFSymbols`); nil = go on and load it.
    private static func precheck(_ candidate: NativeLibrarySpec.Candidate) -> String? {
        #if os(Linux)
            let shown = "\(candidate.path) (\(candidate.source))"
            do {
                let names = try ELFSymbols.exportedNames(path: candidate.path)
                let problems = LlamaABIGuard.symbolProblems { names.contains($0) }
                return problems.isEmpty ? nil : LlamaABIGuard.refusal(path: shown, problems: problems)
            } catch ELFSymbols.Problem.malformed {
                return nil  // no readable symbol table (stripped section headers): dlsym checks after loading
            } catch {
                return "\(shown) \(error); expected \(LlamaABIGuard.expectedBuild)"
            }
        #else
            return nil
        #endif
    }

    private struct VerifiedDefaults {
        var version: String
        var model: LlamaModelParams
        var context: LlamaContextParams
    }

    /// The ABI guard: symbols, version, then the defaults at our offsets. Nothing that passes a struct is called
    /// before the symbol checks pass.
    private static func verify(_ native: NativeLibrary) -> Result<VerifiedDefaults, LlamaCppError> {
        let shownPath = native.shownPath
        let symbolProblems = LlamaABIGuard.symbolProblems { native.symbol($0) != nil }
        guard symbolProblems.isEmpty else {
            return .failure(.libraryUnavailable(LlamaABIGuard.refusal(path: shownPath, problems: symbolProblems)))
        }
        guard LlamaCallCarrier.fits else {
            return .failure(
                .libraryUnavailable(
                    "\(shownPath): this platform's utsname (\(MemoryLayout<LlamaCallCarrier>.size) bytes) cannot carry "
                        + "llama_context_params by value"))
        }
        let versionFn = unsafeBitCast(native.symbol("llama_version"), to: FnVersion.self)
        let version = versionFn().map { String(cString: $0) }
        let ggmlVersion = native.symbol("ggml_version").flatMap {
            unsafeBitCast($0, to: FnVersion.self)().map { String(cString: $0) }
        }
        let versionProblems = [
            LlamaABIGuard.versionProblem(version), LlamaABIGuard.ggmlVersionProblem(ggmlVersion),
        ].compactMap { $0 }
        guard versionProblems.isEmpty else {
            return .failure(.libraryUnavailable(LlamaABIGuard.refusal(path: shownPath, problems: versionProblems)))
        }
        let logSet = unsafeBitCast(native.symbol("llama_log_set"), to: FnLogSet.self)
        logSet(llamaLogCallback, nil)

        let modelDefaultsFn = unsafeBitCast(native.symbol("llama_model_default_params"), to: FnDefaultParams.self)
        let contextDefaultsFn = unsafeBitCast(native.symbol("llama_context_default_params"), to: FnDefaultParams.self)
        let modelBytes = modelDefaultsFn().leadingBytes(as: LlamaModelParams.self)
        let contextBytes = contextDefaultsFn().leadingBytes(as: LlamaContextParams.self)
        let problems =
            LlamaABIGuard.modelDefaultsProblems(modelBytes) + LlamaABIGuard.contextDefaultsProblems(contextBytes)
        guard problems.isEmpty else {
            return .failure(.libraryUnavailable(LlamaABIGuard.refusal(path: shownPath, problems: problems)))
        }
        return .success(
            VerifiedDefaults(
                version: version ?? "", model: loadStruct(LlamaModelParams.self, from: modelBytes),
                context: loadStruct(LlamaContextParams.self, from: contextBytes)))
    }

    private init(
        native: NativeLibrary, version: String, modelDefaults: LlamaModelParams, contextDefaults: LlamaContextParams
    ) throws {
        let path = native.path
        self.native = native
        self.path = path
        self.version = version
        self.modelDefaults = modelDefaults
        self.contextDefaults = contextDefaults
        func fn<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let p = native.symbol(name) else {
                throw LlamaCppError.libraryUnavailable("\(path): \(name) disappeared after the symbol check")
            }
            return unsafeBitCast(p, to: T.self)
        }
        modelLoadFromFile = try fn("llama_model_load_from_file", FnModelLoad.self)
        modelFree = try fn("llama_model_free", FnModelFree.self)
        initFromModel = try fn("llama_init_from_model", FnInitFromModel.self)
        free = try fn("llama_free", FnFree.self)
        modelGetVocab = try fn("llama_model_get_vocab", FnModelGetVocab.self)
        modelNCtxTrain = try fn("llama_model_n_ctx_train", FnModelInt32.self)
        modelNEmbd = try fn("llama_model_n_embd", FnModelInt32.self)
        modelNParams = try fn("llama_model_n_params", FnModelUInt64.self)
        modelSize = try fn("llama_model_size", FnModelUInt64.self)
        modelChatTemplate = try fn("llama_model_chat_template", FnModelChatTemplate.self)
        modelMetaValStr = try fn("llama_model_meta_val_str", FnModelMetaValStr.self)
        modelDesc = try fn("llama_model_desc", FnModelDesc.self)
        nCtx = try fn("llama_n_ctx", FnContextUInt32.self)
        nCtxSeq = try fn("llama_n_ctx_seq", FnContextUInt32.self)
        nBatch = try fn("llama_n_batch", FnContextUInt32.self)
        nUBatch = try fn("llama_n_ubatch", FnContextUInt32.self)
        poolingType = try fn("llama_pooling_type", FnContextInt32.self)
        getMemory = try fn("llama_get_memory", FnGetMemory.self)
        memoryClear = try fn("llama_memory_clear", FnMemoryClear.self)
        memorySeqPosMax = try fn("llama_memory_seq_pos_max", FnMemorySeqPos.self)
        memorySeqRm = try fn("llama_memory_seq_rm", FnMemorySeqRm.self)
        vocabNTokens = try fn("llama_vocab_n_tokens", FnVocabInt32.self)
        vocabBOS = try fn("llama_vocab_bos", FnVocabInt32.self)
        vocabGetAddBOS = try fn("llama_vocab_get_add_bos", FnVocabBool.self)
        vocabIsEOG = try fn("llama_vocab_is_eog", FnVocabTokenBool.self)
        tokenizeFn = try fn("llama_tokenize", FnTokenize.self)
        tokenToPiece = try fn("llama_token_to_piece", FnTokenToPiece.self)
        chatApplyTemplate = try fn("llama_chat_apply_template", FnChatApplyTemplate.self)
        decodeFn = try fn("llama_decode", FnDecode.self)
        setAbortCallback = try fn("llama_set_abort_callback", FnSetAbortCallback.self)
        getLogitsIth = try fn("llama_get_logits_ith", FnGetFloats.self)
        getEmbeddingsSeq = try fn("llama_get_embeddings_seq", FnGetFloats.self)
        getEmbeddingsIth = try fn("llama_get_embeddings_ith", FnGetFloats.self)
        samplerChainInit = try fn("llama_sampler_chain_init", FnSamplerChainInit.self)
        samplerChainAdd = try fn("llama_sampler_chain_add", FnSamplerChainAdd.self)
        samplerInitGreedy = try fn("llama_sampler_init_greedy", FnSamplerNoArgs.self)
        samplerInitDist = try fn("llama_sampler_init_dist", FnSamplerUInt32.self)
        samplerInitTopK = try fn("llama_sampler_init_top_k", FnSamplerInt32.self)
        samplerInitTopP = try fn("llama_sampler_init_top_p", FnSamplerFloatKeep.self)
        samplerInitMinP = try fn("llama_sampler_init_min_p", FnSamplerFloatKeep.self)
        samplerInitTemp = try fn("llama_sampler_init_temp", FnSamplerFloat.self)
        samplerInitPenalties = try fn("llama_sampler_init_penalties", FnSamplerPenalties.self)
        samplerInitGrammar = try fn("llama_sampler_init_grammar", FnSamplerInitGrammar.self)
        samplerApply = try fn("llama_sampler_apply", FnSamplerApply.self)
        samplerAccept = try fn("llama_sampler_accept", FnSamplerAccept.self)
        samplerReset = try fn("llama_sampler_reset", FnSamplerReset.self)
        samplerFree = try fn("llama_sampler_free", FnSamplerFree.self)
        attachThreadpool = try fn("llama_attach_threadpool", FnAttachThreadpool.self)
        threadpoolParamsInit = native.function("ggml_threadpool_params_init", as: FnThreadpoolParamsInit.self)
        threadpoolNew = native.function("ggml_threadpool_new", as: FnThreadpoolNew.self)
        threadpoolFree = native.function("ggml_threadpool_free", as: FnThreadpoolFree.self)
        let backendInit = try fn("llama_backend_init", FnVoid.self)
        backendInit()
    }

    // MARK: Calls that pass structs by value

    /// A ggml CPU thread pool of `threads` threads with ggml's default settings, as llama-bench and llama-server
    /// attach to their contexts (without one, ggml starts and joins its threads for every decode); nil when the
    /// functions are missing or ggml refuses.
    func newThreadpool(threads: Int) -> OpaquePointer? {
        guard let threadpoolParamsInit, let threadpoolNew, threadpoolFree != nil, threads > 0 else { return nil }
        let params = UnsafeMutableRawPointer.allocate(byteCount: ggmlThreadpoolParamsBytes, alignment: 16)
        defer { params.deallocate() }
        params.initializeMemory(as: UInt8.self, repeating: 0, count: ggmlThreadpoolParamsBytes)
        threadpoolParamsInit(params, Int32(clamping: threads))
        return threadpoolNew(params)
    }

    func freeThreadpool(_ pool: OpaquePointer) {
        threadpoolFree?(pool)
    }

    /// `llama_model_load_from_file(path, params)`.
    func loadModel(path: String, params: LlamaModelParams) -> OpaquePointer? {
        path.withCString { modelLoadFromFile($0, .wrapping(params)) }
    }

    /// `llama_init_from_model(model, params)`.
    func newContext(model: OpaquePointer, params: LlamaContextParams) -> OpaquePointer? {
        initFromModel(model, .wrapping(params))
    }

    /// `llama_decode(ctx, batch)`.
    func decode(_ context: OpaquePointer, _ batch: LlamaBatch) -> Int32 {
        decodeFn(context, .wrapping(batch))
    }

    /// `llama_sampler_chain_init(params)`.
    func newSamplerChain(_ params: LlamaSamplerChainParams) -> OpaquePointer? {
        samplerChainInit(params.noPerf)
    }
}

/// Whether llama.cpp's log lines are forwarded to stderr (`SANAD_LLAMA_LOG=1`); dropped otherwise.
private let forwardLlamaLog: Bool = ProcessInfo.processInfo.environment["SANAD_LLAMA_LOG"] == "1"

/// The log callback installed with `llama_log_set` (also covers ggml's log): warnings and errors are kept for load
/// errors (`LlamaLogTail`); every line goes to stderr with `SANAD_LLAMA_LOG=1`.
private let llamaLogCallback: LlamaLogCallback = { level, text, _ in
    guard let text else { return }
    LlamaLogTail.shared.record(level: level, text: String(cString: text))
    if forwardLlamaLog { _ = write(2, text, strlen(text)) }  // fd 2: no shared FILE* (stderr) from a C callback
}

/// The last warning and error lines libllama logged, so that a failed load can say what libllama reported.
final class LlamaLogTail: @unchecked Sendable {  // @unchecked: its lines behind its lock
    static let shared = LlamaLogTail()
    /// `ggml_log_level`: WARN 3, ERROR 4, CONT 5 (continues the previous message).
    static let warn: UInt32 = 3
    static let error: UInt32 = 4
    static let continuation: UInt32 = 5
    /// How many lines are kept.
    static let capacity = 6

    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = ""
    private var keeping = false

    /// Adds a piece of a log message (messages arrive in pieces; a line ends with a newline).
    func record(level: UInt32, text: String) {
        lock.lock()
        defer { lock.unlock() }
        if level != Self.continuation { keeping = level == Self.warn || level == Self.error }
        guard keeping else { return }
        partial += text
        while let newline = partial.firstIndex(of: "\n") {
            let line = partial[..<newline].trimmingCharacters(in: .whitespaces)
            partial = String(partial[partial.index(after: newline)...])
            if !line.isEmpty { lines.append(line) }
        }
        if lines.count > Self.capacity { lines.removeFirst(lines.count - Self.capacity) }
    }

    /// Forgets what was kept (before a call whose failure should be explained).
    func clear() {
        lock.lock()
        defer { lock.unlock() }
        lines.removeAll()
        partial = ""
    }

    /// The kept lines, oldest first, with any unfinished one.
    func recent() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        let rest = partial.trimmingCharacters(in: .whitespacesAndNewlines)
        return rest.isEmpty ? lines : lines + [rest]
    }
}
