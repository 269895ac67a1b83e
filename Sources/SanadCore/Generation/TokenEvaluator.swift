/// What an engine supplies to the shared generation loop (`GenerationLoop`): its tokenizer, one evaluation of a batch
/// of tokens, and the sampler that picks from the result. Prompt preparation, truncation, stop strings,
/// end-of-generation, UTF-8 text, cancellation and statistics are the loop's, the same for every engine.
///
/// The loop calls an evaluator from one thread at a time (it holds its lock around every call).
public protocol TokenEvaluator: AnyObject {
    /// Positions the KV cache holds.
    var contextLength: Int { get }
    /// Whether tokenizing with `addSpecial` puts BOS in front (an empty prompt then starts from `bosToken`).
    var addsBOS: Bool { get }
    var bosToken: Int32? { get }

    /// Token ids of `text`; `addSpecial` adds BOS (and EOS) as the model's flags say, `parseSpecial` turns
    /// special-token text into its token.
    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32]
    /// Throws the engine's error for an id outside the vocabulary.
    func checkTokens(_ tokens: [Int32]) throws
    /// The bytes of one generated token's text, as `llama_token_to_piece(…, lstrip: 0, special: true)`: control
    /// tokens rendered, no leading-space removal (generated text continues a prompt).
    func pieceBytes(_ token: Int32) -> [UInt8]
    /// Whether `token` ends generation (EOS, EOT, `<|im_end|>`, …).
    func isEndOfGeneration(_ token: Int32) -> Bool

    /// Runs `tokens` (valid ids that fit the context) through the model at positions `position…`, appending them to
    /// the KV cache, and computes what the sampler needs to pick the token after the last one. Checks
    /// `cancellation` between batches (and within one where the engine can); returns how many tokens are in the
    /// cache afterwards, fewer than `tokens.count` only when cancelled.
    func evaluate(_ tokens: [Int32], at position: Int, cancellation: GenerationCancellation) throws -> Int
    /// Empties the KV cache.
    func clearCache()
    /// The sampling chain for one generation. `history` holds the tokens in the context, prompt included (the
    /// repetition penalty looks at its tail). Engines that expose logits return a `LogitsSampler` (the core's
    /// chain, where constraint stages plug in); an engine may return its own sampler instead.
    func makeSampler(_ parameters: SamplingParameters, history: [Int32]) throws -> any TokenSampler
}

/// Picks the next token after an evaluation.
public protocol TokenSampler: AnyObject {
    /// The next token; `history` holds the tokens in the context (the last evaluated one last). Throws when a
    /// constraint stage allows no token.
    func next(history: [Int32]) throws -> Int32
    /// Seconds a constraint stage has spent masking (0 when the sampler does not measure it), apart from its
    /// one-off preparation of the vocabulary, `constraintPreparationSeconds`.
    var constraintSeconds: Double { get }
    var constraintPreparationSeconds: Double { get }
    /// The engine's logits of the last evaluated position as `next` will read them, before any sampling stage (nil
    /// when the sampler cannot show them): what log-probabilities are computed from.
    var rawLogits: UnsafeBufferPointer<Float>? { get }
}

extension TokenSampler {
    public var constraintSeconds: Double { 0 }
    public var constraintPreparationSeconds: Double { 0 }
    public var rawLogits: UnsafeBufferPointer<Float>? { nil }
}

/// The core's sampling chain (`Sampler`) reading an engine's logits of the last evaluated position: the sampler of
/// every engine that exposes its logits. Penalties and constraint masks are applied to the buffer in place.
public final class LogitsSampler: TokenSampler {
    public let chain: Sampler
    private let logits: UnsafeMutableBufferPointer<Float>

    /// `logits` (vocabulary-sized) must stay valid and hold the last evaluated position's logits at each `next`.
    public init(
        _ parameters: SamplingParameters, logits: UnsafeMutableBufferPointer<Float>,
        constraint: LogitConstraint? = nil
    ) {
        chain = Sampler(parameters: parameters, constraint: constraint)
        self.logits = logits
    }

    /// Tokens in the vocabulary (the logits' length).
    public var vocabularySize: Int { logits.count }

    public func next(history: [Int32]) throws -> Int32 {
        try chain.sample(logits, history: history)
    }

    public var constraintSeconds: Double { chain.constraintSeconds }
    public var constraintPreparationSeconds: Double { chain.constraintPreparationSeconds }
    public var rawLogits: UnsafeBufferPointer<Float>? { UnsafeBufferPointer(logits) }
}
