import Dispatch
import SanadCore

/// A JSON schema as a `TokenConstraint`: generation produces one JSON document valid for the schema
/// (`CompiledSchema` says which subset and in which layout), then ends.
public final class SchemaConstraint: GrammarConstraint {
    public let schema: CompiledSchema
    public var summary: String { "JSON schema" }

    public init(_ schema: CompiledSchema) { self.schema = schema }

    public convenience init(schema: JSONValue) throws(SchemaError) {
        self.init(try CompiledSchema(schema: schema))
    }

    /// The schema as GBNF (`CompiledSchema.gbnf`), for the llama engine's grammar sampler.
    public func gbnf() throws -> String { try schema.gbnf() }

    public func makeStage(vocabulary: ConstraintVocabulary, sampling: SamplingParameters) throws -> any LogitConstraint
    {
        SchemaMask(matcher: JSONMatcher(schema), vocabulary: vocabulary, sampling: sampling)
    }
}

/// The constraint stage of one generation: the matcher after the tokens chosen so far, and the mask it allows.
///
/// When the chain keeps only the top k tokens (greedy is k = 1), the stage checks tokens from the highest logit
/// down until it has k allowed ones and forbids the rest: the same k survive as with a full mask, for the cost of a
/// few token checks. Otherwise (or when the best few hundred tokens hold fewer than k allowed ones) it walks the
/// vocabulary trie with the matcher.
final class SchemaMask: LogitConstraint {
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

    init(matcher: JSONMatcher, vocabulary: ConstraintVocabulary, sampling: SamplingParameters) {
        self.matcher = matcher
        self.vocabulary = vocabulary
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

    /// Whether `token` may come next.
    private func allows(_ token: Int32) -> Bool {
        if vocabulary.endOfGeneration.contains(token) { return matcher.isComplete }
        let piece = vocabulary.pieces[Int(token)]
        return !piece.isEmpty && matcher.advanced(by: piece) != nil
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
            var any = false
            for i in 0..<min(logits.count, allowed.count) {
                if allowed[i] { any = any || logits[i] > -.infinity } else { logits[i] = -.infinity }
            }
            return any
        }
        guard any else { throw noToken() }
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
        guard token >= 0, Int(token) < vocabulary.pieces.count,
            let next = matcher.advanced(by: vocabulary.pieces[Int(token)])
        else {
            broken = true
            return
        }
        matcher = next
    }
}
