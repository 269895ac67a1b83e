import Dispatch

/// The sampling chain of `SamplingParameters`, in its documented order: penalties (repetition, then frequency and
/// presence, as llama.cpp's penalties sampler) → constraint mask →
/// top-k → top-p → min-p → temperature → pick. With `temperature ≤ 0` the pick is the argmax after the penalty and
/// the constraint. Seeded: the same seed and the same logits give the same tokens.
public final class Sampler {
    public let parameters: SamplingParameters
    /// Optional constraint stage (grammar/JSON-schema constrained generation, `TokenConstraint`).
    public var constraint: LogitConstraint?
    private var generator: SeededGenerator
    private var candidates: [SamplingCandidate] = []
    /// Seconds the constraint stage has spent masking, since this sampler was made, apart from its one-off
    /// preparation of the vocabulary (`constraintPreparationSeconds`).
    public private(set) var constraintSeconds: Double = 0
    public private(set) var constraintPreparationSeconds: Double = 0

    public init(parameters: SamplingParameters, constraint: LogitConstraint? = nil) {
        self.parameters = parameters
        self.constraint = constraint
        generator = SeededGenerator(seed: parameters.seed)
    }

    /// Restarts the random sequence from the seed.
    public func reset() {
        generator = SeededGenerator(seed: parameters.seed)
    }

    /// Picks the next token. `logits` is modified (penalties and mask are applied in place); `history` holds the
    /// tokens so far, of which the last `repetitionWindow` are penalized. Throws when the constraint allows no token.
    public func sample(_ logits: UnsafeMutableBufferPointer<Float>, history: [Int32]) throws -> Int32 {
        let p = parameters
        if p.penalizes {
            let recent = history.suffix(p.repetitionWindow)
            applyRepetitionPenalty(logits, recent: recent, penalty: p.repetitionPenalty)
            applyFrequencyPresencePenalties(
                logits, recent: recent, frequency: p.frequencyPenalty, presence: p.presencePenalty)
        }
        if let constraint {
            let start = DispatchTime.now().uptimeNanoseconds
            let prepared = constraint.preparationSeconds
            defer {
                let preparation = constraint.preparationSeconds - prepared
                constraintPreparationSeconds += preparation
                constraintSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 - preparation
            }
            try constraint.mask(logits)
        }
        let token: Int32
        if p.isGreedy {
            token = Int32(argmax(UnsafeBufferPointer(logits)))
        } else {
            candidates.removeAll(keepingCapacity: true)
            for i in 0..<logits.count where logits[i] > -Float.infinity {
                candidates.append(SamplingCandidate(token: Int32(i), logit: logits[i]))
            }
            if candidates.isEmpty {
                token = Int32(argmax(UnsafeBufferPointer(logits)))
            } else {
                if p.minP > 0 && (p.topK <= 0 || p.topK >= candidates.count) {
                    topPAboveMinP(&candidates, p: p.topP, minP: p.minP)  // top-k keeps all: no full sort
                } else {
                    topK(&candidates, k: p.topK)
                    topP(&candidates, p: p.topP)
                }
                minP(&candidates, minP: p.minP)
                applyTemperature(&candidates, temperature: p.temperature)
                token = pick(&candidates, using: &generator)
            }
        }
        constraint?.accept(token)
        return token
    }
}
