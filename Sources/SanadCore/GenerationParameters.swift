/// Sampling settings shared by every engine. Engines apply them as one chain of stages, in this order:
/// penalties → constraint mask (`GenerationParameters.constraint`) → top-k → top-p → min-p →
/// temperature → pick. `temperature <= 0` is greedy (argmax after penalties and constraints).
public struct SamplingParameters: Sendable, Equatable, Codable {
    public var temperature: Float
    /// Keep the k most likely tokens (0 = off).
    public var topK: Int
    /// Keep the smallest set whose probability reaches p (1 = off).
    public var topP: Float
    /// Drop tokens below `minP × p(max)` (0 = off).
    public var minP: Float
    /// Divide positive logits (multiply negative ones) of recently seen tokens by this (1 = off).
    public var repetitionPenalty: Float
    /// How many recent tokens the penalties look at.
    public var repetitionWindow: Int
    /// Subtracted from a recent token's logit once per time it occurs in the window (0 = off; OpenAI's
    /// `frequency_penalty`, llama.cpp's `penalty_freq`).
    public var frequencyPenalty: Float
    /// Subtracted once from the logit of every token that occurs in the window (0 = off; OpenAI's
    /// `presence_penalty`, llama.cpp's `penalty_present`).
    public var presencePenalty: Float
    public var seed: UInt64

    public init(
        temperature: Float = 0.8, topK: Int = 40, topP: Float = 0.95, minP: Float = 0.05,
        repetitionPenalty: Float = 1.0, repetitionWindow: Int = 64, frequencyPenalty: Float = 0,
        presencePenalty: Float = 0, seed: UInt64 = 0xC0FFEE
    ) {
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repetitionPenalty = repetitionPenalty
        self.repetitionWindow = repetitionWindow
        self.frequencyPenalty = frequencyPenalty
        self.presencePenalty = presencePenalty
        self.seed = seed
    }

    /// Whether any penalty stage changes logits (and the window is not empty).
    public var penalizes: Bool {
        repetitionWindow > 0 && (repetitionPenalty != 1 || frequencyPenalty != 0 || presencePenalty != 0)
    }

    /// Argmax decoding.
    public static let greedy = SamplingParameters(temperature: 0, topK: 0, topP: 1, minP: 0, repetitionPenalty: 1)

    public var isGreedy: Bool { temperature <= 0 }
}

/// One generation request.
public struct GenerationParameters: Sendable, Equatable {
    public static func == (a: GenerationParameters, b: GenerationParameters) -> Bool {
        a.maxTokens == b.maxTokens && a.sampling == b.sampling && a.stopStrings == b.stopStrings
            && a.truncatePrompt == b.truncatePrompt
            && a.logProbabilities.map { ObjectIdentifier($0) } == b.logProbabilities.map { ObjectIdentifier($0) }
            && a.constraint.map { ObjectIdentifier($0) }
                == b.constraint.map { ObjectIdentifier($0) }
    }

    public var maxTokens: Int
    public var sampling: SamplingParameters
    /// Generation stops when the text contains one of these; the stop string itself is not emitted.
    public var stopStrings: [String]
    /// When the prompt does not fit the context: `false` = `SanadError.promptTooLong`, `true` = keep its most recent
    /// tokens, leaving room for `maxTokens` but at least half the free context for the prompt (`GenerationLoop`).
    public var truncatePrompt: Bool
    /// What the output must be (a JSON schema, `SanadStructured`): tokens that cannot continue it are masked before
    /// the other sampling stages, and end of generation is allowed only when it is complete. Engines that cannot
    /// apply it refuse the request. Compared by identity.
    public var constraint: (any TokenConstraint)?
    /// When set, the loop records the log-probabilities of each generated token (and of the most likely
    /// alternatives) from the engine's raw logits, before any sampling stage; engines whose sampler does not expose
    /// its logits refuse the generation. Compared by identity.
    public var logProbabilities: LogProbabilityRecorder?

    public init(
        maxTokens: Int = 256, sampling: SamplingParameters = SamplingParameters(), stopStrings: [String] = [],
        truncatePrompt: Bool = false, constraint: (any TokenConstraint)? = nil,
        logProbabilities: LogProbabilityRecorder? = nil
    ) {
        self.logProbabilities = logProbabilities
        self.constraint = constraint
        self.maxTokens = maxTokens
        self.sampling = sampling
        self.stopStrings = stopStrings
        self.truncatePrompt = truncatePrompt
    }
}
