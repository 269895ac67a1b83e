import Foundation
import GGUF
import SanadCore

/// The abort callback installed while a generation decodes; `data` is the generation's `GenerationCancellation`.
let llamaAbortCallback: LlamaAbortCallback = { data in
    guard let data else { return false }
    return Unmanaged<GenerationCancellation>.fromOpaque(data).takeUnretainedValue().isCancelled
}

/// Token, position, sequence and output-flag arrays for `llama_batch`, allocated once per context.
final class BatchBuffers {
    let capacity: Int
    let tokens: UnsafeMutablePointer<LlamaToken>
    let positions: UnsafeMutablePointer<Int32>
    let seqCounts: UnsafeMutablePointer<Int32>
    let seqIDs: UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>
    let outputs: UnsafeMutablePointer<Int8>
    /// The context's sequence ids 0, 1, …, pointed to by the entries of `seqIDs`.
    let sequenceIDs: UnsafeMutablePointer<Int32>
    let sequences: Int

    init(capacity: Int, sequences: Int) {
        self.capacity = capacity
        self.sequences = max(1, sequences)
        tokens = .allocate(capacity: capacity)
        positions = .allocate(capacity: capacity)
        seqCounts = .allocate(capacity: capacity)
        seqIDs = .allocate(capacity: capacity)
        outputs = .allocate(capacity: capacity)
        sequenceIDs = .allocate(capacity: self.sequences)
        for s in 0..<self.sequences { (sequenceIDs + s).initialize(to: Int32(s)) }
        seqCounts.initialize(repeating: 1, count: capacity)
        seqIDs.initialize(repeating: sequenceIDs, count: capacity)
    }

    deinit {
        tokens.deallocate()
        positions.deallocate()
        seqCounts.deallocate()
        seqIDs.deallocate()
        outputs.deallocate()
        sequenceIDs.deallocate()
    }

    /// A batch of `tokens` at positions `start…` in `sequence`; `output(i)` says whether token i returns logits.
    func batch(_ slice: ArraySlice<LlamaToken>, start: Int, sequence: Int32, output: (Int) -> Bool) -> LlamaBatch {
        for (i, token) in slice.enumerated() {
            set(i, token: token, position: start + i, sequence: sequence, output: output(i))
        }
        return batch(count: slice.count)
    }

    /// A batch of one token per entry of `steps`, each in its own sequence, every one returning logits.
    func batch(_ steps: [LlamaStep]) -> LlamaBatch {
        for (i, step) in steps.enumerated() {
            set(i, token: step.token, position: step.position, sequence: step.sequence, output: true)
        }
        return batch(count: steps.count)
    }

    private func set(_ i: Int, token: LlamaToken, position: Int, sequence: Int32, output: Bool) {
        tokens[i] = token
        positions[i] = Int32(position)
        seqIDs[i] = sequenceIDs + Int(sequence)
        outputs[i] = output ? 1 : 0
    }

    private func batch(count: Int) -> LlamaBatch {
        LlamaBatch(
            nTokens: Int32(count), token: tokens, embd: nil, pos: positions, nSeqID: seqCounts, seqID: seqIDs,
            logits: outputs)
    }
}

/// A model and one context on it: what both the chat session and the embedding model hold. A context made for
/// several sequences (`sequences`, the sessions of `LlamaSession.sharing`) gives each its own KV cache of
/// `contextLength` positions (llama.cpp's per-sequence streams, `kv_unified` off).
final class LlamaModelContext {
    let library: LlamaLibrary
    let path: String
    let model: OpaquePointer
    let context: OpaquePointer
    let vocab: OpaquePointer
    let contextLength: Int
    let batchSize: Int
    let vocabularySize: Int
    let buffers: BatchBuffers
    /// The context's persistent ggml thread pool (nil: ggml makes one per computation).
    private let threadpool: OpaquePointer?

    init(
        library: LlamaLibrary, url: URL, options: ModelLoadOptions, sequences: Int = 1,
        configure: (inout LlamaContextParams, OpaquePointer) throws -> Void
    )
        throws
    {
        self.library = library
        path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw SanadError.modelNotFound(name: path, searched: [path])
        }
        // libllama aborts the process on many implausible files (block_count 0, a vocabulary whose arrays disagree)
        // and blocks on a FIFO: the file is opened as a regular file and validated first, as every engine does.
        try ModelValidation.validate(GGUFFile.shared(path: path))
        // llama.cpp's own defaults, as its tools use them (load mode AUTO = mmap on a CPU build).
        LlamaLogTail.shared.clear()
        guard let model = library.loadModel(path: path, params: library.modelDefaults) else {
            throw LlamaCppError.modelLoadFailed(path: path, libllamaSaid: LlamaLogTail.shared.recent())
        }
        guard let vocab = library.modelGetVocab(model) else {
            library.modelFree(model)
            throw LlamaCppError.modelLoadFailed(path: path, libllamaSaid: LlamaLogTail.shared.recent())
        }
        let trainingContext = Int(library.modelNCtxTrain(model))
        let nCtx = max(8, options.contextLength ?? (trainingContext > 0 ? trainingContext : 4096))
        let sequences = max(1, sequences)
        var params = library.contextDefaults
        params.nCtx = Self.cUInt32(nCtx * sequences)
        params.nBatch = Self.cUInt32(min(options.batchSize, nCtx))
        params.nUBatch = params.nBatch
        params.nSeqMax = Self.cUInt32(sequences)
        params.kvUnified = false
        params.nThreads = Int32(options.threads)
        params.nThreadsBatch = Int32(options.threads)
        params.noPerf = true
        // -ctk/-ctv: llama.cpp turns flash attention on for a quantized V cache itself (its default is auto).
        params.typeK = Int32(options.cacheTypeK.rawValue)
        params.typeV = Int32(options.cacheTypeV.rawValue)
        do {
            try configure(&params, model)
        } catch {
            library.modelFree(model)
            throw error
        }
        guard let context = library.newContext(model: model, params: params) else {
            library.modelFree(model)
            throw LlamaCppError.contextCreationFailed(path: path, contextLength: nCtx)
        }
        self.model = model
        self.vocab = vocab
        self.context = context
        threadpool = library.newThreadpool(threads: options.threads)
        if let threadpool { library.attachThreadpool(context, threadpool, threadpool) }
        // llama.cpp may round a sequence's context up (to a multiple of 256); the session keeps to what was asked,
        // so that every engine given the same options accepts the same prompts.
        contextLength = min(Int(params.nCtx) / sequences, Int(library.nCtxSeq(context)))
        batchSize = Int(library.nBatch(context))
        vocabularySize = Int(library.vocabNTokens(vocab))
        buffers = BatchBuffers(capacity: max(batchSize, sequences), sequences: sequences)
    }

    /// A count for a C `uint32_t` field, clamped into its range (a value derived from the model file never traps;
    /// libllama then refuses what it cannot allocate with its own message).
    static func cUInt32(_ value: Int) -> UInt32 { UInt32(clamping: value) }

    /// Runs `body` with `flag` as the context's abort flag: cancelling it aborts `llama_decode` within one graph
    /// node. The callback is removed afterwards, so the flag never outlives its use.
    func withAbortFlag<T>(_ flag: GenerationCancellation, _ body: () throws -> T) rethrows -> T {
        library.setAbortCallback(context, llamaAbortCallback, Unmanaged.passUnretained(flag).toOpaque())
        defer { library.setAbortCallback(context, nil, nil) }
        return try body()
    }

    deinit {
        library.free(context)
        if let threadpool { library.freeThreadpool(threadpool) }
        library.modelFree(model)
    }

    /// A string metadata value of the model (`general.name`, …), nil when absent.
    func metadata(_ key: String) -> String? {
        Self.metadata(key, library: library, model: model)
    }

    static func metadata(_ key: String, library: LlamaLibrary, model: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        let n = key.withCString { library.modelMetaValStr(model, $0, &buffer, buffer.count) }
        guard n >= 0 else { return nil }
        if Int(n) >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(n) + 1)
            _ = key.withCString { library.modelMetaValStr(model, $0, &buffer, buffer.count) }
        }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [LlamaToken] {
        let length = text.utf8.count
        guard length < Int32.max / 2 else {
            throw LlamaCppError.invalidOption(key: "text", problem: "\(length) bytes are too many to tokenize")
        }
        var tokens = [LlamaToken](repeating: 0, count: length + 4)
        func run(_ capacity: Int) -> Int32 {
            text.withCString { c in
                tokens.withUnsafeMutableBufferPointer { t in
                    library.tokenizeFn(
                        vocab, c, Int32(length), t.baseAddress, Int32(capacity), addSpecial, parseSpecial)
                }
            }
        }
        var n = run(tokens.count)
        if n < 0 {
            guard n != Int32.min else {
                throw LlamaCppError.invalidOption(key: "text", problem: "the token count overflows int32")
            }
            tokens = [LlamaToken](repeating: 0, count: Int(-n))
            n = run(tokens.count)
        }
        return Array(tokens.prefix(Int(max(0, n))))
    }

    /// The bytes of one token's text (`special`: render control tokens).
    func piece(_ token: LlamaToken, special: Bool) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: 64)
        var n = library.tokenToPiece(vocab, token, &buffer, Int32(buffer.count), 0, special)
        if n < 0 {
            buffer = [CChar](repeating: 0, count: Int(-n))
            n = library.tokenToPiece(vocab, token, &buffer, Int32(buffer.count), 0, special)
        }
        return buffer.prefix(Int(max(0, n))).map { UInt8(bitPattern: $0) }
    }

    func clearMemory() {
        library.memoryClear(library.getMemory(context), true)
    }

    /// Empties the KV cache of `sequence`.
    func clearSequence(_ sequence: Int32) {
        _ = library.memorySeqRm(library.getMemory(context), sequence, -1, -1)
    }

    /// Positions of `sequence` in the KV cache (one past its last position).
    func sequenceLength(_ sequence: Int32) -> Int {
        Int(max(-1, library.memorySeqPosMax(library.getMemory(context), sequence))) + 1
    }

    func checkTokens(_ tokens: [LlamaToken]) throws {
        if let bad = tokens.first(where: { $0 < 0 || Int($0) >= vocabularySize }) {
            throw LlamaCppError.invalidToken(id: bad, vocabularySize: vocabularySize)
        }
    }

    /// Decodes `tokens` at positions `start…` of `sequence` in chunks of the batch size. `output(i)` (i = index in `tokens`)
    /// selects tokens whose logits are kept; `afterChunk(offset, count)` runs after each chunk is decoded (to read
    /// those logits before the next chunk overwrites them). Returns false when the abort flag stopped it.
    func decode(
        _ tokens: [LlamaToken], start: Int, sequence: Int32 = 0, output: (Int) -> Bool,
        afterChunk: (Int, Int) throws -> Void = { _, _ in }
    ) throws -> Bool {
        var offset = 0
        while offset < tokens.count {
            let count = min(batchSize, tokens.count - offset)
            let slice = tokens[offset..<(offset + count)]
            let base = offset
            let batch = buffers.batch(slice, start: start + offset, sequence: sequence, output: { output(base + $0) })
            let rc = library.decode(context, batch)
            if rc == 2 { return false }
            guard rc == 0 else { throw LlamaCppError.decodeFailed(code: rc, position: start + offset) }
            try afterChunk(offset, count)
            offset += count
        }
        return true
    }
}

/// A loaded model with its KV cache (see `InferenceSession`). Generation is the core's `GenerationLoop` over a
/// `LlamaEvaluator`; every operation takes the loop's lock, so calls from several tasks run one after another.
// @unchecked Sendable: every operation runs under the generation loop's lock
final class LlamaSession: InferenceSession, @unchecked Sendable {
    let model: ModelDescription
    private let core: LlamaModelContext
    private let evaluator: LlamaEvaluator
    private let passes: SharedPasses<LlamaStep>?
    /// The model's template (or the engine's `template` option), or why the option is unusable.
    private let chatTemplate: Result<ModelChatTemplate, SanadError>
    /// The shared generation loop; it knows what the cache holds.
    private let loop: GenerationLoop

    convenience init(library: LlamaLibrary, url: URL, options: ModelLoadOptions) throws {
        let core = try LlamaModelContext(library: library, url: url, options: options) { _, _ in }
        self.init(core: core, evaluator: LlamaEvaluator(core: core), passes: nil, url: url, options: options)
    }

    /// `count` sessions on one model and one context with a sequence (and a KV cache of `options.contextLength`)
    /// each: generations running at the same time in different sessions decode their tokens as one batch of
    /// several sequences (`llama_decode`, continuous batching, `SharedPasses`). For a server's slots.
    static func sharing(count: Int, library: LlamaLibrary, url: URL, options: ModelLoadOptions) throws
        -> [LlamaSession]
    {
        let count = max(1, count)
        let core = try LlamaModelContext(library: library, url: url, options: options, sequences: count) { _, _ in }
        let passes = core.sharedPasses(streams: count)
        return (0..<count).map { s in
            LlamaSession(
                core: core, evaluator: LlamaEvaluator(core: core, sequence: Int32(s), passes: passes), passes: passes,
                url: url, options: options)
        }
    }

    private init(
        core: LlamaModelContext, evaluator: LlamaEvaluator, passes: SharedPasses<LlamaStep>?, url: URL,
        options: ModelLoadOptions
    ) {
        self.core = core
        self.evaluator = evaluator
        self.passes = passes
        let library = core.library
        loop = GenerationLoop(evaluator: evaluator)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
        let bos = library.vocabBOS(core.vocab)
        let eos = core.metadata("tokenizer.ggml.eos_token_id").flatMap { Int32($0) }
        let special = ChatSpecialTokens(
            bos: bos >= 0 ? String(decoding: core.piece(bos, special: true), as: UTF8.self) : "",
            eos: eos.map { String(decoding: core.piece($0, special: true), as: UTF8.self) } ?? "",
            addsBOS: library.vocabGetAddBOS(core.vocab))
        let jinja = core.library.modelChatTemplate(core.model, nil).map { String(cString: $0) }
        let architecture = core.metadata("general.architecture")
        chatTemplate = Result(catching: {
            ModelChatTemplate(
                jinja: jinja, architecture: architecture, specialTokens: special,
                override: try options.engineOptions["template"]?.stringValue.map(ChatPromptTemplate.option))
        }).mapError { $0 as? SanadError ?? SanadError.engine("\($0)") }
        model = ModelDescription(
            name: core.metadata("general.name") ?? url.deletingPathExtension().lastPathComponent,
            architecture: core.metadata("general.architecture") ?? "unknown",
            parameterCount: Int(library.modelNParams(core.model)), fileSize: size ?? 0,
            contextLength: core.contextLength, trainingContextLength: Int(library.modelNCtxTrain(core.model)),
            vocabularySize: core.vocabularySize, addsBOS: library.vocabGetAddBOS(core.vocab),
            bosToken: bos >= 0 ? bos : nil, eosToken: eos)
    }

    /// For sessions made by `sharing`: the most generations one `llama_decode` has taken so far (1 when none ran
    /// together); 1 for a session of its own.
    var largestSharedPass: Int { max(1, passes?.largestPass ?? 1) }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        try core.tokenize(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        var bytes: [UInt8] = []
        for t in tokens where t >= 0 && Int(t) < core.vocabularySize {
            bytes += core.piece(t, special: renderSpecial)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The model's template (`llama_model_chat_template`) run by SanadCore's Jinja interpreter, so that every engine
    /// sees the same prompt; the `template` engine option names a family, a .jinja file or Jinja text instead.
    func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try chatTemplate.get().apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    func reset() {
        loop.reset()
    }

    func append(_ tokens: [Int32]) throws {
        try loop.append(tokens)
    }

    func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        try core.checkTokens(tokens)
        guard tokens.count <= core.contextLength else {
            throw SanadError.promptTooLong(tokens: tokens.count, context: core.contextLength)
        }
        let wanted = (rows ?? 0..<tokens.count).clamped(to: 0..<tokens.count)
        return try loop.withEmptyCache { try logits(tokens, wanted) }
    }

    /// The logits of the `wanted` positions of `tokens`, decoded from an empty cache.
    private func logits(_ tokens: [Int32], _ wanted: Range<Int>) throws -> [[Float]] {
        var out: [[Float]] = []
        out.reserveCapacity(wanted.count)
        let n = core.vocabularySize
        // llama_get_logits_ith takes the token's index in the batch just decoded.
        let collect: (Int, Int) throws -> Void = { offset, count in
            for i in offset..<(offset + count) where wanted.contains(i) {
                guard let row = self.core.library.getLogitsIth(self.core.context, Int32(i - offset)) else {
                    throw LlamaCppError.decodeFailed(code: -1, position: i)
                }
                out.append(Array(UnsafeBufferPointer(start: row, count: n)))
            }
        }
        let completed = try evaluator.exclusive {
            try core.decode(
                tokens, start: 0, sequence: evaluator.sequence, output: { wanted.contains($0) }, afterChunk: collect)
        }
        guard completed else { throw CancellationError() }
        return out
    }

    func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        loop.generate(input, parameters: parameters, threadName: "sanad.llama.generate")
    }
}
