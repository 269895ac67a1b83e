import Foundation
import GGUF
import SanadCore

/// A set flag aborts `llama_decode` (through the context's abort callback) and stops the generation loop.
final class AbortFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set(_ newValue: Bool) {
        lock.lock()
        value = newValue
        lock.unlock()
    }
}

/// The abort callback installed on every context; `data` is the session's `AbortFlag`.
let llamaAbortCallback: LlamaAbortCallback = { data in
    guard let data else { return false }
    return Unmanaged<AbortFlag>.fromOpaque(data).takeUnretainedValue().isSet
}

/// Token, position, sequence and output-flag arrays for `llama_batch`, allocated once per context.
final class BatchBuffers {
    let capacity: Int
    let tokens: UnsafeMutablePointer<LlamaToken>
    let positions: UnsafeMutablePointer<Int32>
    let seqCounts: UnsafeMutablePointer<Int32>
    let seqIDs: UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>
    let outputs: UnsafeMutablePointer<Int8>
    /// Sequence 0, pointed to by every entry of `seqIDs`.
    let sequenceZero: UnsafeMutablePointer<Int32>

    init(capacity: Int) {
        self.capacity = capacity
        tokens = .allocate(capacity: capacity)
        positions = .allocate(capacity: capacity)
        seqCounts = .allocate(capacity: capacity)
        seqIDs = .allocate(capacity: capacity)
        outputs = .allocate(capacity: capacity)
        sequenceZero = .allocate(capacity: 1)
        sequenceZero.initialize(to: 0)
        seqCounts.initialize(repeating: 1, count: capacity)
        seqIDs.initialize(repeating: sequenceZero, count: capacity)
    }

    deinit {
        tokens.deallocate()
        positions.deallocate()
        seqCounts.deallocate()
        seqIDs.deallocate()
        outputs.deallocate()
        sequenceZero.deallocate()
    }

    /// A batch of `tokens` at positions `start…` in sequence 0; `output(i)` says whether token i returns logits.
    func batch(_ slice: ArraySlice<LlamaToken>, start: Int, output: (Int) -> Bool) -> LlamaBatch {
        for (i, token) in slice.enumerated() {
            tokens[i] = token
            positions[i] = Int32(start + i)
            outputs[i] = output(i) ? 1 : 0
        }
        return LlamaBatch(
            nTokens: Int32(slice.count), token: tokens, embd: nil, pos: positions, nSeqID: seqCounts, seqID: seqIDs,
            logits: outputs)
    }
}

/// A model and one context on it: what both the chat session and the embedding model hold.
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

    init(
        library: LlamaLibrary, url: URL, options: ModelLoadOptions,
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
        try ModelValidation.validate(GGUFFile(path: path))
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
        var params = library.contextDefaults
        params.nCtx = Self.cUInt32(nCtx)
        params.nBatch = Self.cUInt32(min(options.batchSize, nCtx))
        params.nUBatch = params.nBatch
        params.nSeqMax = 1
        params.nThreads = Int32(options.threads)
        params.nThreadsBatch = Int32(options.threads)
        params.noPerf = true
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
        // llama.cpp may round the context up (to a multiple of 256); the session keeps to what was asked, so that
        // every engine given the same options accepts the same prompts.
        contextLength = min(Int(params.nCtx), Int(library.nCtx(context)))
        batchSize = Int(library.nBatch(context))
        vocabularySize = Int(library.vocabNTokens(vocab))
        buffers = BatchBuffers(capacity: batchSize)
    }

    /// A count for a C `uint32_t` field, clamped into its range (a value derived from the model file never traps;
    /// libllama then refuses what it cannot allocate with its own message).
    static func cUInt32(_ value: Int) -> UInt32 { UInt32(clamping: value) }

    /// Runs `body` with `flag` as the context's abort flag: setting it aborts `llama_decode` within one graph
    /// node. The callback is removed afterwards, so the flag never outlives its use.
    func withAbortFlag<T>(_ flag: AbortFlag, _ body: () throws -> T) rethrows -> T {
        library.setAbortCallback(context, llamaAbortCallback, Unmanaged.passUnretained(flag).toOpaque())
        defer { library.setAbortCallback(context, nil, nil) }
        return try body()
    }

    deinit {
        library.free(context)
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
        return String(cString: buffer)
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

    func checkTokens(_ tokens: [LlamaToken]) throws {
        if let bad = tokens.first(where: { $0 < 0 || Int($0) >= vocabularySize }) {
            throw LlamaCppError.invalidToken(id: bad, vocabularySize: vocabularySize)
        }
    }

    /// Decodes `tokens` at positions `start…` in chunks of the batch size. `output(i)` (i = index in `tokens`)
    /// selects tokens whose logits are kept; `afterChunk(offset, count)` runs after each chunk is decoded (to read
    /// those logits before the next chunk overwrites them). Returns false when the abort flag stopped it.
    func decode(
        _ tokens: [LlamaToken], start: Int, output: (Int) -> Bool, afterChunk: (Int, Int) throws -> Void = { _, _ in }
    ) throws -> Bool {
        var offset = 0
        while offset < tokens.count {
            let count = min(batchSize, tokens.count - offset)
            let slice = tokens[offset..<(offset + count)]
            let base = offset
            let batch = buffers.batch(slice, start: start + offset, output: { output(base + $0) })
            let rc = library.decode(context, batch)
            if rc == 2 { return false }
            guard rc == 0 else { throw LlamaCppError.decodeFailed(code: rc, position: start + offset) }
            try afterChunk(offset, count)
            offset += count
        }
        return true
    }
}

/// A loaded model with its KV cache (see `InferenceSession`). Every operation takes the session's lock, so calls
/// from several tasks run one after another.
final class LlamaSession: InferenceSession, @unchecked Sendable {
    let model: ModelDescription
    private let core: LlamaModelContext
    private let lock = NSLock()
    private let templateOverride: String?
    /// Tokens in the KV cache, in order (the repetition penalty looks at their tail).
    private var history: [LlamaToken] = []
    private var cached: Int { history.count }
    /// The last sampled token, not yet decoded (decoded first by the next `generate`).
    private var pendingToken: LlamaToken?

    init(library: LlamaLibrary, url: URL, options: ModelLoadOptions) throws {
        core = try LlamaModelContext(library: library, url: url, options: options) { _, _ in }
        templateOverride = options.engineOptions["template"]?.stringValue
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
        let bos = library.vocabBOS(core.vocab)
        model = ModelDescription(
            name: core.metadata("general.name") ?? url.deletingPathExtension().lastPathComponent,
            architecture: core.metadata("general.architecture") ?? "unknown",
            parameterCount: Int(library.modelNParams(core.model)), fileSize: size ?? 0,
            contextLength: core.contextLength, trainingContextLength: Int(library.modelNCtxTrain(core.model)),
            vocabularySize: core.vocabularySize, addsBOS: library.vocabGetAddBOS(core.vocab),
            bosToken: bos >= 0 ? bos : nil)
    }

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

    /// The model's template (`llama_model_chat_template`), recognised and applied by SanadCore's `ChatTemplate` so
    /// that every engine sees the same prompt; the `template` engine option names a family instead.
    func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        let jinja = core.library.modelChatTemplate(core.model, nil).map { String(cString: $0) }
        let family = try ChatTemplate.resolve(jinja: jinja, override: templateOverride)
        return family.apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    func reset() {
        lock.lock()
        defer { lock.unlock() }
        resetLocked()
    }

    func append(_ tokens: [Int32]) throws {
        lock.lock()
        defer { lock.unlock() }
        try core.checkTokens(tokens)
        let pending = (pendingToken.map { [$0] } ?? []) + tokens
        guard history.count + pending.count <= core.contextLength else {
            throw SanadError.promptTooLong(tokens: history.count + pending.count, context: core.contextLength)
        }
        pendingToken = nil
        let last = pending.count - 1
        guard try core.decode(pending, start: history.count, output: { $0 == last }) else {
            throw CancellationError()
        }
        history.append(contentsOf: pending)
    }

    private func resetLocked() {
        core.clearMemory()
        history.removeAll(keepingCapacity: true)
        pendingToken = nil
    }

    func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        lock.lock()
        defer { lock.unlock() }
        try core.checkTokens(tokens)
        guard tokens.count <= core.contextLength else {
            throw SanadError.promptTooLong(tokens: tokens.count, context: core.contextLength)
        }
        let wanted = (rows ?? 0..<tokens.count).clamped(to: 0..<tokens.count)
        resetLocked()
        defer { resetLocked() }
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
        let completed = try core.decode(tokens, start: 0, output: { wanted.contains($0) }, afterChunk: collect)
        guard completed else { throw CancellationError() }
        return out
    }

    func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        AsyncThrowingStream { continuation in
            // One flag per generation: a cancelled stream can never stop (or fail to stop) another one.
            let flag = AbortFlag()
            continuation.onTermination = { termination in
                if case .cancelled = termination { flag.set(true) }
            }
            let thread = Thread { [self] in
                do {
                    try self.run(input, parameters, flag, continuation)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = "sanad.llama.generate"
            thread.start()
        }
    }

    // MARK: Generation

    private func samplerChain(_ p: SamplingParameters) throws -> OpaquePointer {
        let lib = core.library
        guard let chain = lib.newSamplerChain(LlamaSamplerChainParams(noPerf: true)) else {
            throw LlamaCppError.invalidOption(key: "sampling", problem: "llama_sampler_chain_init returned NULL")
        }
        // Same stages and order as the pure-Swift engine: penalties → top-k → top-p → min-p → temperature → pick.
        if p.repetitionPenalty != 1 && p.repetitionWindow > 0 {
            lib.samplerChainAdd(
                chain,
                lib.samplerInitPenalties(
                    Int32(core.vocabularySize), Int32(clamping: p.repetitionWindow), p.repetitionPenalty, 0, 0))
        }
        if p.isGreedy {
            lib.samplerChainAdd(chain, lib.samplerInitGreedy())
            return chain
        }
        if p.topK > 0 { lib.samplerChainAdd(chain, lib.samplerInitTopK(Int32(clamping: p.topK))) }
        if p.topP < 1 { lib.samplerChainAdd(chain, lib.samplerInitTopP(p.topP, 1)) }
        if p.minP > 0 { lib.samplerChainAdd(chain, lib.samplerInitMinP(p.minP, 1)) }
        lib.samplerChainAdd(chain, lib.samplerInitTemp(p.temperature))
        // llama.cpp seeds are 32-bit, and 0xFFFFFFFF means "random": fold the 64-bit seed and avoid that value.
        var seed = UInt32(truncatingIfNeeded: p.seed ^ (p.seed >> 32))
        if seed == UInt32.max { seed = 0 }
        lib.samplerChainAdd(chain, lib.samplerInitDist(seed))
        return chain
    }

    private func run(
        _ input: GenerationInput, _ parameters: GenerationParameters, _ flag: AbortFlag,
        _ continuation: AsyncThrowingStream<GenerationEvent, Error>.Continuation
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        try core.withAbortFlag(flag) {
            try generateLocked(input, parameters, flag, continuation)
        }
    }

    private func generateLocked(
        _ input: GenerationInput, _ parameters: GenerationParameters, _ flag: AbortFlag,
        _ continuation: AsyncThrowingStream<GenerationEvent, Error>.Continuation
    ) throws {
        let lib = core.library
        if flag.isSet {
            continuation.yield(.finished(.cancelled, GenerationStats()))
            return
        }

        var prompt: [LlamaToken]
        switch input {
        case .text(let text, let parseSpecial):
            prompt = try core.tokenize(text, addSpecial: cached == 0 && pendingToken == nil, parseSpecial: parseSpecial)
        case .tokens(let tokens):
            try core.checkTokens(tokens)
            prompt = tokens
        }
        if let pending = pendingToken { prompt.insert(pending, at: 0) }
        let available = core.contextLength - cached
        if prompt.count > available {
            guard parameters.truncatePrompt, available > 1 else {
                throw SanadError.promptTooLong(tokens: cached + prompt.count, context: core.contextLength)
            }
            // Keep the last tokens, leaving room for at least one generated token.
            prompt = Array(prompt.suffix(available - 1))
        }
        guard !prompt.isEmpty || cached > 0 else {
            throw LlamaCppError.invalidOption(
                key: "prompt", problem: "the prompt is empty and the session holds nothing")
        }
        pendingToken = nil

        let chain = try samplerChain(parameters.sampling)
        defer { lib.samplerFree(chain) }
        // The penalty window looks at the most recent tokens of the context, the prompt included.
        for t in (history + prompt).suffix(max(0, parameters.sampling.repetitionWindow)) {
            lib.samplerAccept(chain, t)
        }

        var stats = GenerationStats(promptTokens: prompt.count)
        let promptStart = DispatchTime.now().uptimeNanoseconds
        if !prompt.isEmpty {
            let last = prompt.count - 1
            let completed = try core.decode(prompt, start: cached, output: { $0 == last })
            guard completed else {
                syncAfterAbort(decoding: prompt)
                continuation.yield(.finished(.cancelled, stats))
                return
            }
            history += prompt
        }
        let generationStart = DispatchTime.now().uptimeNanoseconds
        stats.promptSeconds = Double(generationStart - promptStart) / 1e9

        var decoder = UTF8StreamDecoder()
        var stops = StopStringMatcher(parameters.stopStrings)
        func finish(_ reason: StopReason) {
            stats.generationSeconds = Double(DispatchTime.now().uptimeNanoseconds - generationStart) / 1e9
            continuation.yield(.finished(reason, stats))
        }
        guard parameters.maxTokens > 0 else { return finish(.maxTokens) }

        while true {
            if flag.isSet { return finish(.cancelled) }
            let token = lib.samplerSample(chain, core.context, -1)
            if lib.vocabIsEOG(core.vocab, token) {
                let held = stops.flush()
                if !held.isEmpty { continuation.yield(.token(id: token, text: held)) }
                pendingToken = token
                return finish(.endOfGeneration)
            }
            stats.generatedTokens += 1
            // The sampled token goes to position `cached`; it no longer fits when the cache is full.
            let contextFull = cached >= core.contextLength
            let isLast = stats.generatedTokens >= parameters.maxTokens || contextFull
            var text = decoder.append(core.piece(token, special: true))
            if isLast { text += decoder.flush() }
            let (emit, stopped) = stops.feed(text)
            if stopped {
                continuation.yield(.token(id: token, text: emit))
                pendingToken = token
                return finish(.stopString)
            }
            continuation.yield(.token(id: token, text: isLast ? emit + stops.flush() : emit))
            if stats.generatedTokens >= parameters.maxTokens {
                pendingToken = token
                return finish(.maxTokens)
            }
            if contextFull { return finish(.contextFull) }
            let completed = try core.decode([token], start: cached, output: { _ in true })
            guard completed else {
                syncAfterAbort(decoding: [token])
                return finish(.cancelled)
            }
            history.append(token)
        }
    }

    /// After an aborted decode of `tokens` the micro-batches already processed stay in the cache; continue after
    /// them.
    private func syncAfterAbort(decoding tokens: [LlamaToken]) {
        let lib = core.library
        let kept = Int(max(-1, lib.memorySeqPosMax(lib.getMemory(core.context), 0))) + 1
        history = Array((history + tokens).prefix(max(0, kept)))
        pendingToken = nil
    }
}
