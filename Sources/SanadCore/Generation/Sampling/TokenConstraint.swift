import Foundation

/// A stage that forbids tokens before sampling: grammar and JSON-schema constraints plug in here. One stage serves
/// one generation; it follows the tokens chosen through `accept`.
public protocol LogitConstraint: AnyObject {
    /// Sets the logits of tokens that may not come next to −∞. Throws when no token may come next (a constraint
    /// never lets an unchecked token through).
    func mask(_ logits: UnsafeMutableBufferPointer<Float>) throws
    /// Tells the constraint which token was chosen.
    func accept(_ token: Int32)
    /// Of the time `mask` has taken, the seconds spent once per vocabulary (indexing it for the constraint), which
    /// later generations over the same vocabulary do not pay again.
    var preparationSeconds: Double { get }
}

extension LogitConstraint {
    public var preparationSeconds: Double { 0 }
}

/// A constraint on what a generation may produce (a JSON schema, a grammar), set in
/// `GenerationParameters.constraint`. The generation loop asks it for a fresh stage for every generation; an engine
/// whose sampler takes no stage (libllama's own chain) refuses the generation rather than running unconstrained.
public protocol TokenConstraint: AnyObject, Sendable {
    /// A few words for messages (`JSON schema`).
    var summary: String { get }
    /// The stage for one generation over `vocabulary` with the sampling settings it will run under.
    func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters) throws -> any LogitConstraint
    /// The same for a generation that may write at most `tokenBudget` tokens (the end of generation apart): what
    /// the generation loop calls. A constraint that can always finish (a JSON schema) keeps its output completable
    /// within them, and throws when even its shortest output does not fit. The default ignores the budget.
    func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters, tokenBudget: Int) throws
        -> any LogitConstraint
    /// For an engine whose own sampler applies the constraint as a grammar (which knows no budget): what checks its
    /// picks against `tokenBudget`, or nil when the constraint promises nothing about a budget (the default).
    func makeBudgetGuard(vocabulary: ConstraintVocabulary, tokenBudget: Int) throws -> (any BudgetGuard)?
}

extension TokenConstraint {
    public func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters, tokenBudget: Int) throws
        -> any LogitConstraint
    {
        try makeStage(vocabulary: vocabulary, sampling: sampling)
    }

    public func makeBudgetGuard(vocabulary: ConstraintVocabulary, tokenBudget: Int) throws -> (any BudgetGuard)? {
        nil
    }
}

/// What a constraint needs of a model's vocabulary: every token's bytes (as the generated text has them) and which
/// tokens end generation. Built once per session; `derived` keeps what constraints compute from it (a byte trie).
// @unchecked Sendable: `pieces` and `endOfGeneration` are immutable; `cache` is only touched under `lock`
public final class ConstraintVocabulary: @unchecked Sendable {
    public let pieces: [[UInt8]]
    public let endOfGeneration: Set<Int32>
    private let lock = NSLock()
    private var cache: [String: Any] = [:]

    public init(pieces: [[UInt8]], endOfGeneration: Set<Int32>) {
        self.pieces = pieces
        self.endOfGeneration = endOfGeneration
    }

    /// The value made once under `key` for this vocabulary.
    public func derived<T>(_ key: String, _ make: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        if let known = cache[key] as? T { return known }
        let value = make()
        cache[key] = value
        return value
    }
}
