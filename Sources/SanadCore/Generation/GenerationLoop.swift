import Foundation

/// Set by the consumer's side (the stream was cancelled or dropped); the generation loop polls it before every
/// token and an engine between batches, or within one where it can (libllama's abort callback).
public final class GenerationCancellation: @unchecked Sendable {  // @unchecked: `value` is only touched under `lock`
    private let lock = NSLock()
    private var value = false

    public init() {}

    public func cancel() {
        lock.lock()
        value = true
        lock.unlock()
    }

    public var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// The generation loop every engine shares, over the engine's `TokenEvaluator`, and the tokens the engine's KV cache
/// holds. It prepares the prompt (BOS, the empty-prompt and truncation policies of README.md, "Generation"), runs
/// the token loop with the engine's sampler, streams whole UTF-8 characters, applies stop strings and
/// end-of-generation, stops within a few tokens of a consumer's cancel, and counts the statistics.
///
/// One request at a time: every method takes the loop's lock, so a second `generate` waits for the first. The loop
/// remembers what the cache holds, so a later `generate` continues the conversation; `reset()` forgets it. A token
/// sampled last and not yet run through the model (the generation ended on it) is kept and goes first next time.
/// (`@unchecked Sendable`: all mutable state, and the evaluator, which need not be Sendable, is used under `lock`.)
// @unchecked Sendable: mutable state and the evaluator used under `lock`
public final class GenerationLoop: @unchecked Sendable {
    private let evaluator: any TokenEvaluator
    /// Events the generation thread may run ahead of the stream's consumer.
    public static let eventsAhead = 4

    private let lock = NSLock()
    /// Tokens in the KV cache, in order.
    private var history: [Int32] = []
    /// A generated token that was returned but not yet run through the model.
    private var pending: Int32?
    /// Whether the last evaluation completed, so that the sampler can pick after `history` without a new token.
    private var canContinue = false
    /// The vocabulary as constraints see it, made on the first constrained generation.
    private var constraintVocabulary: ConstraintVocabulary?

    public init(evaluator: any TokenEvaluator) {
        self.evaluator = evaluator
    }

    /// Tokens the session holds (in the cache, or generated and not yet run through the model). Waits for a running
    /// request to finish.
    public var tokenCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return history.count + (pending == nil ? 0 : 1)
    }

    // MARK: Streaming

    /// Runs `run` on a thread of its own and streams its events. The stream's buffer holds `eventsAhead` events: the
    /// generation thread waits for a consumer that lags (or is starved of CPU by the engine's own threads), so a
    /// consumer that stops stops generation within a few tokens instead of letting it run on unseen. Cancelling the
    /// consuming task or dropping the stream cancels the generation.
    public func generate(_ input: GenerationInput, parameters: GenerationParameters, threadName: String)
        -> AsyncThrowingStream<GenerationEvent, Error>
    {
        AsyncThrowingStream(GenerationEvent.self, bufferingPolicy: .bufferingOldest(Self.eventsAhead)) {
            continuation in
            let cancellation = GenerationCancellation()
            continuation.onTermination = { _ in cancellation.cancel() }
            let thread = Thread { [self] in
                do {
                    try self.run(input, parameters: parameters, cancellation: cancellation) { event in
                        var event = event
                        // A full buffer refuses the event; wait for the consumer to take one, unless it has gone.
                        while case .dropped(let refused) = continuation.yield(event), !cancellation.isCancelled {
                            event = refused
                            usleep(200)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = threadName
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    // MARK: The loop

    /// The generation, on the calling thread: `emit` receives every event, the last one `.finished`. Throws for a
    /// prompt that cannot be used (too long without truncation, empty with nothing to start from, a bad token id)
    /// and for an engine failure (the session is then emptied).
    public func run(
        _ input: GenerationInput, parameters: GenerationParameters, cancellation: GenerationCancellation,
        emit: (GenerationEvent) -> Void
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        var stats = GenerationStats()
        if cancellation.isCancelled { return emit(.finished(.cancelled, stats)) }

        var prompt: [Int32]
        switch input {
        case .text(let text, let parseSpecial):
            prompt = try evaluator.tokenize(
                text, addSpecial: history.isEmpty && pending == nil, parseSpecial: parseSpecial)
        case .tokens(let tokens):
            try evaluator.checkTokens(tokens)
            prompt = tokens
        }
        if let pending { prompt.insert(pending, at: 0) }
        if prompt.isEmpty && !canContinue {
            prompt = try Self.emptyPromptStart(
                holding: history.count, addsBOS: evaluator.addsBOS, bos: evaluator.bosToken)
        }
        prompt = try Self.fit(
            prompt, holding: history.count, contextLength: evaluator.contextLength, parameters: parameters,
            bos: evaluator.bosToken)
        pending = nil

        stats.promptTokens = prompt.count
        let promptStart = DispatchTime.now()
        if !prompt.isEmpty, try evaluate(prompt, cancellation) < prompt.count {
            stats.promptSeconds = seconds(since: promptStart)
            return emit(.finished(.cancelled, stats))
        }
        stats.promptSeconds = seconds(since: promptStart)

        let generationStart = DispatchTime.now()
        var chain: (any TokenSampler)?
        func finish(_ reason: StopReason) {
            stats.generationSeconds = seconds(since: generationStart)
            stats.constraintSeconds = chain?.constraintSeconds ?? 0
            stats.constraintPreparationSeconds = chain?.constraintPreparationSeconds ?? 0
            emit(.finished(reason, stats))
        }
        guard parameters.maxTokens > 0 else { return finish(.maxTokens) }
        let sampler = try evaluator.makeSampler(parameters.sampling, history: history)
        chain = sampler
        if let constraint = parameters.constraint {
            // The tokens this loop can write: `maxTokens`, or fewer when the context fills first (the token sampled
            // at position `contextLength` is still emitted).
            let budget = min(parameters.maxTokens, evaluator.contextLength - history.count + 1)
            try attach(constraint, parameters.sampling, budget: budget, to: sampler)
        }
        var decoder = UTF8StreamDecoder()
        var filter = StopStringFilter(parameters.stopStrings)
        let recorder = parameters.logProbabilities
        if recorder != nil && sampler.rawLogits == nil {
            throw SanadError.engine(
                "this engine samples with a sampler that does not show its logits, so it cannot report "
                    + "log-probabilities; use a local engine (pure-swift, blas or llama)")
        }
        // The raw logits of the step, copied before the sampler's stages change them in place.
        var rawLogits: [Float] = []
        while true {
            if cancellation.isCancelled { return finish(.cancelled) }
            if recorder != nil, let raw = sampler.rawLogits {
                rawLogits.removeAll(keepingCapacity: true)
                rawLogits.append(contentsOf: raw)
            }
            let token = try sampler.next(history: history)
            if let recorder, !evaluator.isEndOfGeneration(token) {
                recorder.record(
                    rawLogits.withUnsafeBufferPointer {
                        GeneratedLogProbabilities.compute(
                            logits: $0, chosen: token, topCount: recorder.topCount, piece: evaluator.pieceBytes)
                    })
            }
            if evaluator.isEndOfGeneration(token) {
                // The end token itself is not text; what was held back for a stop string comes out with it.
                decoder.dropPending()
                let rest = filter.flush()
                if !rest.isEmpty { emit(.token(id: token, text: rest)) }
                pending = token
                return finish(.endOfGeneration)
            }
            stats.generatedTokens += 1
            let (piece, stopped) = filter.append(decoder.append(evaluator.pieceBytes(token)))
            if stopped {
                emit(.token(id: token, text: piece))
                pending = token
                return finish(.stopString)
            }
            let reachedMax = stats.generatedTokens >= parameters.maxTokens
            // The sampled token would go to position `history.count`: past the end of a full cache.
            let contextFull = history.count >= evaluator.contextLength
            if reachedMax || contextFull {
                // The last text: no character is left cut (its missing bytes will never come), nothing held back.
                decoder.dropPending()
                emit(.token(id: token, text: piece + filter.flush()))
                if reachedMax {
                    pending = token
                    return finish(.maxTokens)
                }
                return finish(.contextFull)
            }
            emit(.token(id: token, text: piece))
            if try evaluate([token], cancellation) == 0 {
                pending = token
                return finish(.cancelled)
            }
        }
    }

    /// Puts `constraint`'s stage, for a generation of at most `budget` tokens, into the core's sampling chain, or
    /// gives an engine's own sampler its grammar and, where the constraint has one, the guard that keeps its picks
    /// within the budget; an engine that can take neither refuses the generation rather than run it unconstrained.
    private func attach(
        _ constraint: any TokenConstraint, _ sampling: SamplingParameters, budget: Int, to sampler: any TokenSampler
    ) throws {
        if let own = sampler as? GrammarSampler {
            guard let grammar = constraint as? GrammarConstraint else {
                throw Self.cannotApply(constraint)
            }
            try own.constrain(gbnf: try grammar.gbnf())
            let vocabulary = vocabulary(size: own.vocabularySize)
            if let guarding = try constraint.makeBudgetGuard(vocabulary: vocabulary, tokenBudget: budget) {
                own.keep(within: guarding)
            }
            return
        }
        guard let chain = sampler as? LogitsSampler else {
            throw Self.cannotApply(constraint)
        }
        chain.chain.constraint = try constraint.makeStage(
            vocabulary: vocabulary(size: chain.vocabularySize), sampling: sampling, tokenBudget: budget)
    }

    /// The vocabulary as constraints see it (made once per session).
    private func vocabulary(size: Int) -> ConstraintVocabulary {
        if let known = constraintVocabulary, known.pieces.count == size { return known }
        let ids = 0..<Int32(clamping: size)
        let vocabulary = ConstraintVocabulary(
            pieces: ids.map { evaluator.pieceBytes($0) },
            endOfGeneration: Set(ids.filter { evaluator.isEndOfGeneration($0) }))
        constraintVocabulary = vocabulary
        return vocabulary
    }

    private static func cannotApply(_ constraint: any TokenConstraint) -> SanadError {
        SanadError.engine(
            "this engine samples with its own sampler and cannot apply a \(constraint.summary) constraint; "
                + "use the pure-swift or blas engine (--backend pure-swift)")
    }

    // MARK: Prompt policy (README.md, "Generation")

    /// What an empty prompt starts from when nothing is left to continue after: the BOS token when the model adds
    /// one, else an error.
    static func emptyPromptStart(holding held: Int, addsBOS: Bool, bos: Int32?) throws -> [Int32] {
        guard held == 0 else {
            throw SanadError.engine(
                "the prompt is empty and the session's last request was cancelled before it finished reading its "
                    + "prompt, so there is nothing to continue from; give a prompt or reset the session")
        }
        guard addsBOS, let bos else {
            throw SanadError.engine(
                "the prompt is empty and the model adds no BOS token to start from; give a prompt of at least one "
                    + "token")
        }
        return [bos]
    }

    /// The part of `prompt` that goes into a context of `contextLength` positions of which `held` are taken. A
    /// prompt that fits is kept whole. One that does not is refused with `promptTooLong` unless
    /// `parameters.truncatePrompt`; then its most recent tokens are kept, leaving room for `maxTokens` generated
    /// tokens but never less than half the free positions for the prompt, and a BOS that starts the context stays
    /// first.
    static func fit(
        _ prompt: [Int32], holding held: Int, contextLength: Int, parameters: GenerationParameters, bos: Int32?
    ) throws -> [Int32] {
        let room = contextLength - held
        guard prompt.count > room else { return prompt }
        let keep = room - min(max(parameters.maxTokens, 0), room / 2)
        guard parameters.truncatePrompt, keep > 0 else {
            throw SanadError.promptTooLong(tokens: held + prompt.count, context: contextLength)
        }
        if held == 0, keep > 1, let bos, prompt.first == bos {
            return [bos] + prompt.suffix(keep - 1)
        }
        return Array(prompt.suffix(keep))
    }

    // MARK: The cache

    /// Appends `tokens` (after a pending generated token) to what the session holds, running them through the model
    /// — no sampling, no text. Throws `promptTooLong` when the context would overflow.
    public func append(_ tokens: [Int32]) throws {
        lock.lock()
        defer { lock.unlock() }
        try evaluator.checkTokens(tokens)
        let all = (pending.map { [$0] } ?? []) + tokens
        guard history.count + all.count <= evaluator.contextLength else {
            throw SanadError.promptTooLong(tokens: history.count + all.count, context: evaluator.contextLength)
        }
        pending = nil
        if !all.isEmpty { _ = try evaluate(all, GenerationCancellation()) }
    }

    /// Empties the cache and forgets the pending token.
    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        clear()
    }

    /// Runs `body` with the loop's lock held on an empty cache, and empties it again afterwards: for work that uses
    /// the engine's cache on its own (`evaluateLogits`).
    public func withEmptyCache<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        clear()
        defer { clear() }
        return try body()
    }

    private func clear() {
        evaluator.clearCache()
        history.removeAll(keepingCapacity: true)
        pending = nil
        canContinue = false
    }

    /// Evaluates `tokens` after `history` and records what reached the cache. A failed evaluation empties the
    /// session (the cache's state is unknown).
    private func evaluate(_ tokens: [Int32], _ cancellation: GenerationCancellation) throws -> Int {
        let done: Int
        do {
            done = min(
                tokens.count, max(0, try evaluator.evaluate(tokens, at: history.count, cancellation: cancellation)))
        } catch {
            clear()
            throw error
        }
        history.append(contentsOf: tokens.prefix(done))
        canContinue = done == tokens.count
        return done
    }

    private func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
