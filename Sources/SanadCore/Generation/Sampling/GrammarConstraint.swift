/// A constraint that can also be written as a GBNF grammar (llama.cpp's grammar language, start rule `root`): what
/// an engine whose sampler runs inside its library applies instead of a `LogitConstraint` stage.
public protocol GrammarConstraint: TokenConstraint {
    /// The GBNF text; throws when this constraint cannot be written as a grammar.
    func gbnf() throws -> String
}

/// An engine's own sampler that applies a GBNF grammar itself (libllama's grammar sampler).
public protocol GrammarSampler: TokenSampler {
    /// Constrains the rest of this generation to `gbnf`; throws when the engine refuses the grammar (never runs
    /// unconstrained).
    func constrain(gbnf: String) throws
    /// Tokens in the vocabulary (the logits' length).
    var vocabularySize: Int { get }
    /// Keeps the rest of this generation within a token budget as well (a grammar knows none): every pick is
    /// checked with `budget.fits`, and one that does not fit is picked again with `budget.mask` applied to the
    /// logits first.
    func keep(within budget: any BudgetGuard)
}

/// What keeps a generation in an engine's own sampler within its token budget, beside the grammar that sampler
/// applies: a JSON schema's stage (`TokenConstraint.makeBudgetGuard`). `mask` forbids every token that does not fit.
public protocol BudgetGuard: LogitConstraint {
    /// Whether `token` may be picked now: it continues the output and leaves room to finish it.
    func fits(_ token: Int32) -> Bool
}

/// A GBNF grammar given as text (`sanad generate --grammar FILE`): only engines with a `GrammarSampler` apply it;
/// the core's sampling chain refuses it, since it has no GBNF matcher.
public final class GBNFGrammar: GrammarConstraint {
    public let text: String
    public var summary: String { "GBNF grammar" }

    public init(_ text: String) { self.text = text }

    public func gbnf() -> String { text }

    public func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters) throws -> any LogitConstraint
    {
        throw SanadError.engine("a GBNF grammar is applied by the llama engine only; use --backend llama")
    }
}
