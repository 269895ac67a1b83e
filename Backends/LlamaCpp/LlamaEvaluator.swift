import SanadCore

/// One session's single-token step in a pass of a shared context (`LlamaSession.sharing`).
struct LlamaStep {
    let token: LlamaToken
    let sequence: Int32
    let position: Int
    /// Where the step's logits are copied (the context's rows are overwritten by the next decode).
    let logits: UnsafeMutablePointer<Float>
}

extension LlamaModelContext {
    /// Continuous batching for the sessions of this context: each pass is one `llama_decode` of a batch with one
    /// token per session, each in the session's sequence, their logits copied out to each session.
    ///
    /// The steps go in order of sequence id: with a KV stream per sequence, libllama puts into one micro-batch only
    /// a run of consecutive sequence ids (`llama_batch_allocr::split_equal`), so steps in arrival order would be
    /// decoded in several graph computations (measured: a pass of 8 took as long as 8 passes of one).
    func sharedPasses(streams: Int) -> SharedPasses<LlamaStep> {
        SharedPasses(streams: min(streams, batchSize)) { arrived in
            let steps = arrived.sorted { $0.sequence < $1.sequence }
            let rc = self.library.decode(self.context, self.buffers.batch(steps))
            guard rc == 0 else { throw LlamaCppError.decodeFailed(code: rc, position: steps[0].position) }
            for (i, step) in steps.enumerated() {
                guard let row = self.library.getLogitsIth(self.context, Int32(i)) else {
                    throw LlamaCppError.decodeFailed(code: -1, position: step.position)
                }
                step.logits.update(from: row, count: self.vocabularySize)
            }
        }
    }
}

/// What libllama supplies to the shared `GenerationLoop`: its tokenizer, `llama_decode` (aborted within one graph
/// node by a cancel, through the context's abort callback), and its own sampler chain: the same stages in the same
/// order as the core's `Sampler`, run inside the library.
///
/// A session of its own has the context to itself (sequence 0) and samples from the context's last logits. A
/// session of a shared context (`LlamaSession.sharing`) has its own sequence: its single-token steps join the passes
/// of the other sessions (`SharedPasses`), everything else it does to the context (a prompt, clearing its cache)
/// runs between passes, and it samples from its own copy of its last logits.
final class LlamaEvaluator: TokenEvaluator {
    let core: LlamaModelContext
    let sequence: Int32
    private let passes: SharedPasses<LlamaStep>?
    /// The session's last logits, for a shared context.
    private let ownLogits: UnsafeMutablePointer<Float>?

    init(core: LlamaModelContext, sequence: Int32 = 0, passes: SharedPasses<LlamaStep>? = nil) {
        self.core = core
        self.sequence = sequence
        self.passes = passes
        if passes != nil {
            let logits = UnsafeMutablePointer<Float>.allocate(capacity: core.vocabularySize)
            logits.initialize(repeating: 0, count: core.vocabularySize)
            ownLogits = logits
        } else {
            ownLogits = nil
        }
    }

    deinit { ownLogits?.deallocate() }

    var contextLength: Int { core.contextLength }
    var addsBOS: Bool { core.library.vocabGetAddBOS(core.vocab) }
    var bosToken: Int32? {
        let bos = core.library.vocabBOS(core.vocab)
        return bos >= 0 ? bos : nil
    }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        try core.tokenize(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    func checkTokens(_ tokens: [Int32]) throws {
        try core.checkTokens(tokens)
    }

    func pieceBytes(_ token: Int32) -> [UInt8] {
        core.piece(token, special: true)
    }

    func isEndOfGeneration(_ token: Int32) -> Bool {
        core.library.vocabIsEOG(core.vocab, token)
    }

    /// Runs `body` with the context to this session: at once for a context of its own, between passes for a
    /// shared one.
    func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        guard let passes else { return try body() }
        return try passes.alone(body)
    }

    /// Decodes `tokens` in pieces of the batch size with logits for the last one; in a shared context each piece
    /// runs between passes, so other sessions keep generating during a long prompt. After an aborted decode the
    /// micro-batches already processed stay in the cache: the count returned says how many.
    func evaluate(_ tokens: [Int32], at position: Int, cancellation: GenerationCancellation) throws -> Int {
        if let passes, let ownLogits, tokens.count == 1 {
            let step = LlamaStep(token: tokens[0], sequence: sequence, position: position, logits: ownLogits)
            try passes.join(step, stream: ObjectIdentifier(self))
            return 1
        }
        var done = 0
        while done < tokens.count {
            if cancellation.isCancelled { return done }
            let piece = Array(tokens[done..<min(done + core.batchSize, tokens.count)])
            let last = done + piece.count == tokens.count ? piece.count - 1 : -1
            let completed = try exclusive {
                let completed = try core.withAbortFlag(cancellation) {
                    try core.decode(piece, start: position + done, sequence: sequence, output: { $0 == last })
                }
                if completed && last >= 0, let ownLogits {
                    guard let row = core.library.getLogitsIth(core.context, -1) else {
                        throw LlamaCppError.decodeFailed(code: -1, position: position + tokens.count - 1)
                    }
                    ownLogits.update(from: row, count: core.vocabularySize)
                }
                return completed
            }
            guard completed else {
                let kept = exclusive { core.sequenceLength(sequence) }
                return min(tokens.count, max(0, kept - position))
            }
            done += piece.count
        }
        return tokens.count
    }

    func clearCache() {
        exclusive { core.clearSequence(sequence) }
    }

    /// The logits of the last evaluated position: the session's copy, or the context's last row.
    func lastLogits() -> UnsafePointer<Float>? {
        if let ownLogits { return UnsafePointer(ownLogits) }
        return core.library.getLogitsIth(core.context, -1).map { UnsafePointer($0) }
    }

    func makeSampler(_ parameters: SamplingParameters, history: [Int32]) throws -> any TokenSampler {
        try LlamaSamplerChain(evaluator: self, parameters: parameters, history: history)
    }
}

/// A `llama_sampler` chain for one generation: penalties → top-k → top-p → min-p → temperature → pick, as
/// `SamplingParameters` documents them; with a grammar, libllama's grammar sampler ahead of them.
final class LlamaSamplerChain: GrammarSampler {
    private let core: LlamaModelContext
    private let evaluator: LlamaEvaluator
    /// The chain sampled from (it owns the samplers added to it).
    private var chain: OpaquePointer
    /// The candidates of one step, one per vocabulary entry.
    private let candidates: UnsafeMutablePointer<LlamaTokenData>
    /// What keeps the picks within the token budget (a JSON schema's), and the logits it masks.
    private var budget: (any BudgetGuard)?
    private var masked: [Float] = []

    /// The chain for `p`, with the last `p.repetitionWindow` tokens of `history` accepted (the penalty window looks
    /// at the most recent tokens of the context, the prompt included).
    init(evaluator: LlamaEvaluator, parameters p: SamplingParameters, history: [Int32]) throws {
        let core = evaluator.core
        let lib = core.library
        guard let chain = lib.newSamplerChain(LlamaSamplerChainParams(noPerf: true)) else {
            throw LlamaCppError.invalidOption(key: "sampling", problem: "llama_sampler_chain_init returned NULL")
        }
        self.core = core
        self.evaluator = evaluator
        self.chain = chain
        candidates = .allocate(capacity: core.vocabularySize)
        if p.penalizes {
            lib.samplerChainAdd(
                chain,
                lib.samplerInitPenalties(
                    Int32(core.vocabularySize), Int32(clamping: p.repetitionWindow), p.repetitionPenalty,
                    p.frequencyPenalty, p.presencePenalty))
        }
        if p.isGreedy {
            lib.samplerChainAdd(chain, lib.samplerInitGreedy())
        } else {
            if p.topK > 0 { lib.samplerChainAdd(chain, lib.samplerInitTopK(Int32(clamping: p.topK))) }
            if p.topP < 1 { lib.samplerChainAdd(chain, lib.samplerInitTopP(p.topP, 1)) }
            if p.minP > 0 { lib.samplerChainAdd(chain, lib.samplerInitMinP(p.minP, 1)) }
            lib.samplerChainAdd(chain, lib.samplerInitTemp(p.temperature))
            // llama.cpp seeds are 32-bit, and 0xFFFFFFFF means "random": fold the 64-bit seed and avoid that value.
            var seed = UInt32(truncatingIfNeeded: p.seed ^ (p.seed >> 32))
            if seed == UInt32.max { seed = 0 }
            lib.samplerChainAdd(chain, lib.samplerInitDist(seed))
        }
        for t in history.suffix(max(0, p.repetitionWindow)) {
            lib.samplerAccept(chain, t)
        }
    }

    deinit {
        core.library.samplerFree(chain)
        candidates.deallocate()
    }

    /// Puts libllama's grammar sampler for `gbnf` (start rule `root`) ahead of the chain: a new chain of the two,
    /// so that the prompt tokens the penalty stage has seen are not fed to the grammar.
    func constrain(gbnf: String) throws {
        let lib = core.library
        LlamaLogTail.shared.clear()
        let vocab = core.vocab
        let made = gbnf.withCString { text in "root".withCString { lib.samplerInitGrammar(vocab, text, $0) } }
        guard let grammar = made else {
            throw LlamaCppError.grammarRefused(libllamaSaid: LlamaLogTail.shared.recent())
        }
        guard let outer = lib.newSamplerChain(LlamaSamplerChainParams(noPerf: true)) else {
            lib.samplerFree(grammar)
            throw LlamaCppError.invalidOption(key: "sampling", problem: "llama_sampler_chain_init returned NULL")
        }
        lib.samplerChainAdd(outer, grammar)
        lib.samplerChainAdd(outer, chain)
        chain = outer
    }

    var vocabularySize: Int { core.vocabularySize }

    func keep(within budget: any BudgetGuard) { self.budget = budget }

    /// What `llama_sampler_sample` does, on the evaluator's last logits (which for a session of a shared context
    /// are its own copy, not the context's row): every token a candidate, the chain applied, the pick accepted. With
    /// a budget guard, a pick that leaves no room to finish the output is replaced by a pick among the tokens that
    /// do (the chain applied again to the guard's mask of the logits).
    func next(history: [Int32]) throws -> Int32 {
        guard let logits = evaluator.lastLogits() else {
            throw LlamaCppError.decodeFailed(code: -1, position: history.count)
        }
        var token = try pick(logits)
        if let budget, !budget.fits(token) {
            masked = Array(UnsafeBufferPointer(start: logits, count: core.vocabularySize))
            try masked.withUnsafeMutableBufferPointer { try budget.mask($0) }
            token = try masked.withUnsafeBufferPointer { try pick($0.baseAddress ?? logits) }
            guard budget.fits(token) else {
                throw SanadError.engine(
                    "llama: no token the grammar allows can finish the output within the token limit")
            }
        }
        core.library.samplerAccept(chain, token)
        budget?.accept(token)
        return token
    }

    /// The chain's pick over `logits` (not accepted).
    private func pick(_ logits: UnsafePointer<Float>) throws -> Int32 {
        let n = core.vocabularySize
        for id in 0..<n { candidates[id] = LlamaTokenData(id: Int32(id), logit: logits[id], p: 0) }
        var array = LlamaTokenDataArray(data: candidates, size: n, selected: -1, sorted: false)
        withUnsafeMutableBytes(of: &array) { raw in
            if let base = raw.baseAddress { core.library.samplerApply(chain, base) }
        }
        guard let data = array.data, array.selected >= 0, array.selected < Int64(array.size) else {
            throw SanadError.engine("llama: the sampler chain selected no token")
        }
        return data[Int(array.selected)].id
    }

    /// The logits `next` reads (the chain works on a copy of them, so they stay raw).
    var rawLogits: UnsafeBufferPointer<Float>? {
        evaluator.lastLogits().map { UnsafeBufferPointer(start: $0, count: core.vocabularySize) }
    }
}
