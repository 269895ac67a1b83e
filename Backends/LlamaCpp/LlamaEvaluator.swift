import SanadCore

/// What libllama supplies to the shared `GenerationLoop`: its tokenizer, `llama_decode` (aborted within one graph
/// node by a cancel, through the context's abort callback), and its own sampler chain: the same stages in the same
/// order as the core's `Sampler`, run inside the library so that no logits are copied out per token.
final class LlamaEvaluator: TokenEvaluator {
    let core: LlamaModelContext

    init(core: LlamaModelContext) {
        self.core = core
    }

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

    /// Decodes `tokens` in chunks of the batch size with logits for the last one. After an aborted decode the
    /// micro-batches already processed stay in the cache: the count returned says how many.
    func evaluate(_ tokens: [Int32], at position: Int, cancellation: GenerationCancellation) throws -> Int {
        let last = tokens.count - 1
        let completed = try core.withAbortFlag(cancellation) {
            try core.decode(tokens, start: position, output: { $0 == last })
        }
        if completed { return tokens.count }
        let lib = core.library
        let kept = Int(max(-1, lib.memorySeqPosMax(lib.getMemory(core.context), 0))) + 1
        return min(tokens.count, max(0, kept - position))
    }

    func clearCache() {
        core.clearMemory()
    }

    func makeSampler(_ parameters: SamplingParameters, history: [Int32]) throws -> any TokenSampler {
        try LlamaSamplerChain(core: core, parameters: parameters, history: history)
    }
}

/// A `llama_sampler` chain for one generation: penalties → top-k → top-p → min-p → temperature → pick, as
/// `SamplingParameters` documents them; with a grammar, libllama's grammar sampler ahead of them.
final class LlamaSamplerChain: GrammarSampler {
    private let core: LlamaModelContext
    /// The chain sampled from (it owns the samplers added to it).
    private var chain: OpaquePointer

    /// The chain for `p`, with the last `p.repetitionWindow` tokens of `history` accepted (the penalty window looks
    /// at the most recent tokens of the context, the prompt included).
    init(core: LlamaModelContext, parameters p: SamplingParameters, history: [Int32]) throws {
        let lib = core.library
        guard let chain = lib.newSamplerChain(LlamaSamplerChainParams(noPerf: true)) else {
            throw LlamaCppError.invalidOption(key: "sampling", problem: "llama_sampler_chain_init returned NULL")
        }
        self.core = core
        self.chain = chain
        if p.repetitionPenalty != 1 && p.repetitionWindow > 0 {
            lib.samplerChainAdd(
                chain,
                lib.samplerInitPenalties(
                    Int32(core.vocabularySize), Int32(clamping: p.repetitionWindow), p.repetitionPenalty, 0, 0))
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

    deinit { core.library.samplerFree(chain) }

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

    /// `llama_sampler_sample` on the last output row; the chain accepts the token itself.
    func next(history: [Int32]) -> Int32 {
        core.library.samplerSample(chain, core.context, -1)
    }
}
