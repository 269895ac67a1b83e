import Dispatch
import SanadCore

/// A JSON schema as a `TokenConstraint`: generation produces one JSON document valid for the schema
/// (`CompiledSchema` says which subset and in which layout), then ends.
///
/// Given the generation's token budget (`makeStage(vocabulary:sampling:tokenBudget:)`, which the generation loop
/// passes: `maxTokens`, or less where the context ends first), the document always closes within it: a token is
/// allowed only when the shortest completion after it, written one single-byte token at a time
/// (`shortestDocument` counts the same way), still fits in the tokens left. While the budget is comfortable that
/// removes nothing; near its end only tokens on a shortest way to a valid document remain. A budget below the
/// shortest document is refused before generation starts.
public final class SchemaConstraint: GrammarConstraint {
    public let schema: CompiledSchema
    /// The JSON Schema it was compiled from (nil when made from a compiled schema): what a receipt names.
    public let source: JSONValue?
    public var summary: String { "JSON schema" }

    public init(_ schema: CompiledSchema, source: JSONValue? = nil) {
        self.schema = schema
        self.source = source
    }

    public convenience init(schema: JSONValue) throws(SchemaError) {
        self.init(try CompiledSchema(schema: schema), source: schema)
    }

    /// The bytes of the shortest document the schema accepts in the matcher's layout: the fewest tokens a
    /// generation is sure to need when each byte is a token of its own (byte-level vocabularies: SmolLM2, Llama 3,
    /// and SentencePiece models with byte fallback). The smallest token limit a constrained generation accepts; nil
    /// when no document can be written.
    public var shortestDocument: Int? {
        let cost = CompletionCost(schema.nodes).value[schema.root]
        return cost < CompletionCost.unreachable ? cost : nil
    }

    /// The schema as GBNF (`CompiledSchema.gbnf`), for the llama engine's grammar sampler.
    public func gbnf() throws -> String { try schema.gbnf() }

    public func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters) throws -> any LogitConstraint
    {
        SchemaMask(matcher: JSONMatcher(schema), vocabulary: vocabulary, sampling: sampling, budget: nil)
    }

    /// The stage for a generation of at most `tokenBudget` tokens: the document closes within them. Throws when
    /// the budget is below the shortest document (in this vocabulary's single-byte tokens).
    public func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters, tokenBudget: Int) throws
        -> any LogitConstraint
    {
        let single = Self.singleByteTokens(vocabulary)
        let costs = CompletionCost(schema.nodes, singleByte: single)
        let shortest = costs.value[schema.root]
        guard shortest < CompletionCost.unreachable else {
            // The vocabulary cannot spell the shortest document byte by byte: no promise is made, the generation
            // runs as without a budget.
            return SchemaMask(matcher: JSONMatcher(schema), vocabulary: vocabulary, sampling: sampling, budget: nil)
        }
        guard shortest <= tokenBudget else { throw Self.budgetTooSmall(shortest: shortest, budget: tokenBudget) }
        return SchemaMask(
            matcher: JSONMatcher(schema), vocabulary: vocabulary, sampling: sampling,
            budget: (tokenBudget, costs))
    }

    /// The stage as a guard beside libllama's grammar sampler (the llama engine): the grammar applies the schema,
    /// the guard checks each pick against the budget and masks the logits (a full mask) when one does not fit.
    /// Nil when the vocabulary cannot spell documents byte by byte (no promise).
    public func makeBudgetGuard(vocabulary: ConstraintVocabulary, tokenBudget: Int) throws -> (any BudgetGuard)? {
        let stage = try makeStage(
            vocabulary: vocabulary, sampling: SamplingParameters(temperature: 1, topK: 0), tokenBudget: tokenBudget)
        guard let mask = stage as? SchemaMask, mask.hasBudget else { return nil }
        return mask
    }

    /// The error for a token limit below the shortest document.
    static func budgetTooSmall(shortest: Int, budget: Int) -> SanadError {
        SanadError.engine(
            "the JSON schema's shortest document takes \(shortest) tokens (one byte per token, what the constraint "
                + "can promise) but this generation may write only \(budget) (its token limit, or the context left "
                + "after the prompt); raise the token limit (-n, max_tokens) to at least \(shortest), or the context")
    }

    /// Whether each byte is a whole token of `vocabulary` (made once per vocabulary).
    static func singleByteTokens(_ vocabulary: ConstraintVocabulary) -> [Bool] {
        vocabulary.derived("SanadStructured.singleByteTokens") { () -> [Bool] in
            var single = [Bool](repeating: false, count: 256)
            for (i, piece) in vocabulary.pieces.enumerated()
            where piece.count == 1 && !vocabulary.endOfGeneration.contains(Int32(i)) {
                single[Int(piece[0])] = true
            }
            return single
        }
    }

    /// Whether `text` is a whole document valid for the schema (the matcher's layout).
    public func isComplete(_ text: some Sequence<UInt8>) -> Bool {
        JSONMatcher(schema).advanced(by: text)?.isComplete ?? false
    }
}

/// The constraint stage of one generation: the matcher after the tokens chosen so far, and the mask it allows.
///
/// When the chain keeps only the top k tokens (greedy is k = 1), the stage checks tokens from the highest logit
/// down until it has k allowed ones and forbids the rest: the same k survive as with a full mask, for the cost of a
/// few token checks. Otherwise (or when the best few hundred tokens hold fewer than k allowed ones) it walks the
/// vocabulary trie with the matcher.
///
/// With a budget, a token is allowed only when the shortest completion after it (`CompletionCost`) fits in the
/// tokens left after it. The first token of a shortest completion always does (its cost is one less), so the
/// stage never runs out of tokens while the document can still close.
final class SchemaMask: BudgetGuard {
    private var matcher: JSONMatcher
    private let vocabulary: ConstraintVocabulary
    /// The vocabulary's trie and the walk of a plain string's start, made on the first full mask (once per
    /// vocabulary): the top-k path never needs them.
    private lazy var index = vocabulary.derived("SanadStructured.VocabularyTrie") {
        () -> (trie: VocabularyTrie, plain: VocabularyTrie.StringWalk) in
        prepared {
            let trie = VocabularyTrie(vocabulary)
            return (trie, trie.plainStringWalk())
        }
    }
    private let keep: Int
    private var allowed: [Bool]
    private var candidates: [SamplingCandidate] = []
    private var broken = false
    private lazy var stringWalks = VocabularyTrie.StringWalkCache(plain: index.plain)
    private(set) var preparationSeconds: Double = 0
    /// The tokens this generation may write (end of generation apart), and the shortest completions.
    private let budget: (tokens: Int, costs: CompletionCost)?
    /// Tokens accepted so far (end of generation apart).
    private var written = 0

    init(
        matcher: JSONMatcher, vocabulary: ConstraintVocabulary, sampling: SamplingParameters,
        budget: (tokens: Int, costs: CompletionCost)?
    ) {
        self.matcher = matcher
        self.vocabulary = vocabulary
        self.budget = budget
        keep = sampling.isGreedy ? 1 : max(0, sampling.topK)
        allowed = Array(repeating: false, count: vocabulary.pieces.count)
    }

    /// `make()`, timed as preparation: what it derives from the vocabulary is made once (by the first stage that
    /// needs it) and shared.
    private func prepared<T>(_ make: () -> T) -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { preparationSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        return make()
    }

    var hasBudget: Bool { budget != nil }

    func fits(_ token: Int32) -> Bool { !broken && allows(token) }

    /// The bytes a completion may still take after the token chosen now (nil without a budget).
    private var room: Int? { budget.map { $0.tokens - written - 1 } }

    /// Whether `token` may come next.
    private func allows(_ token: Int32) -> Bool {
        if vocabulary.endOfGeneration.contains(token) { return matcher.isComplete }
        let piece = vocabulary.pieces[Int(token)]
        guard !piece.isEmpty, let next = matcher.advanced(by: piece) else { return false }
        guard let room, let costs = budget?.costs else { return true }
        return costs.cost(next) <= room
    }

    func mask(_ logits: UnsafeMutableBufferPointer<Float>) throws {
        guard !broken else {
            throw SanadError.engine(
                "the JSON-schema constraint lost track of the output (a token it had forbidden was chosen)")
        }
        if keep > 0 && keep * 8 < logits.count && maskTop(logits) { return }
        let trie = index.trie
        let complete = matcher.isComplete
        let any = allowed.withUnsafeMutableBufferPointer { allowed in
            allowed.update(repeating: false)
            if complete { for t in vocabulary.endOfGeneration { allowed[Int(t)] = true } }
            if let base = allowed.baseAddress { trie.markAccepted(from: matcher, cache: &stringWalks, into: base) }
            keepWithinBudget(allowed)
            var any = false
            for i in 0..<min(logits.count, allowed.count) {
                if allowed[i] { any = any || logits[i] > -.infinity } else { logits[i] = -.infinity }
            }
            return any
        }
        guard any else { throw noToken() }
    }

    /// Of the tokens `allowed` marks, forbids those after which the shortest completion no longer fits in the
    /// budget. Inside a plain string, where most of the vocabulary is allowed, tokens that stay inside it add at
    /// most an escape's bytes to the completion, so only tokens with a quote are checked unless the budget is
    /// within that margin. Should no token fit (the budget was already short), the cheapest ones are kept.
    private func keepWithinBudget(_ allowed: UnsafeMutableBufferPointer<Bool>) {
        guard let room, let costs = budget?.costs else { return }
        var checkAll = true
        if costs.everyByteIsAToken, let context = matcher.stringContext, context.rule.pattern == nil,
            let thread = matcher.threads.first
        {
            let rest = costs.cost(thread.stack.dropLast())
            let need = max(0, context.rule.minLength - context.progress.length)
            // A token inside the string leaves at most `\u` and 4 hex digits' worth of a character in progress.
            checkAll = rest + need + 6 > room
        }
        let quoted = checkAll ? [] : Self.tokensWithQuote(vocabulary)
        var cheapest = CompletionCost.unreachable
        var kept = false
        var checked: [(token: Int, cost: Int)] = []
        func check(_ t: Int) {
            guard allowed[t], !vocabulary.endOfGeneration.contains(Int32(t)),
                let next = matcher.advanced(by: vocabulary.pieces[t])
            else { return }
            let cost = costs.cost(next)
            checked.append((t, cost))
            cheapest = min(cheapest, cost)
            if cost > room { allowed[t] = false } else { kept = true }
        }
        if checkAll {
            for t in 0..<allowed.count where allowed[t] { check(t) }
        } else {
            for t in quoted where Int(t) < allowed.count { check(Int(t)) }
            kept = true
        }
        let ending = matcher.isComplete && vocabulary.endOfGeneration.contains { Int($0) < allowed.count }
        if !kept && !ending {
            for (t, cost) in checked where cost == cheapest { allowed[t] = true }
        }
    }

    /// The tokens whose bytes hold a double quote (made once per vocabulary).
    private static func tokensWithQuote(_ vocabulary: ConstraintVocabulary) -> [Int32] {
        vocabulary.derived("SanadStructured.tokensWithQuote") { () -> [Int32] in
            vocabulary.pieces.indices.filter { vocabulary.pieces[$0].contains(UInt8(ascii: "\"")) }.map(Int32.init)
        }
    }

    /// Keeps only the `keep` best allowed tokens, when they are among the best few hundred; false otherwise.
    private func maskTop(_ logits: UnsafeMutableBufferPointer<Float>) -> Bool {
        candidates.removeAll(keepingCapacity: true)
        for i in 0..<logits.count where logits[i] > -.infinity {
            candidates.append(SamplingCandidate(token: Int32(i), logit: logits[i]))
        }
        let all = candidates.count
        topK(&candidates, k: min(all, max(keep * 8, 256)))
        var kept: [Int32] = []
        for c in candidates where allows(c.token) {
            kept.append(c.token)
            if kept.count == keep { break }
        }
        guard kept.count == keep || candidates.count == all else { return false }
        let values = kept.map { logits[Int($0)] }
        for i in 0..<logits.count { logits[i] = -.infinity }
        for (t, v) in zip(kept, values) { logits[Int(t)] = v }
        return !kept.isEmpty
    }

    private func noToken() -> SanadError {
        SanadError.engine(
            "the JSON-schema constraint allows no token here (the model's vocabulary cannot continue the document, "
                + "or every allowed token has probability zero)")
    }

    func accept(_ token: Int32) {
        if vocabulary.endOfGeneration.contains(token) { return }
        written += 1
        guard token >= 0, Int(token) < vocabulary.pieces.count,
            let next = matcher.advanced(by: vocabulary.pieces[Int(token)])
        else {
            broken = true
            return
        }
        matcher = next
    }
}
