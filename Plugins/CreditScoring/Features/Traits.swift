/// Big Five traits, each 0–1.
public struct BigFive: Sendable, Equatable {
    public var openness: Double
    public var conscientiousness: Double
    public var extraversion: Double
    public var agreeableness: Double
    public var neuroticism: Double
}

/// One reason behind the result: a feature, its value, what it moved, and message ids (never text).
public struct Explanation: Sendable, Equatable {
    public var feature: String
    public var value: Double
    /// `trustworthiness +`, `neuroticism +`, …
    public var effect: String
    public var messageIds: [String]
}

/// How features become traits and the score (the deterministic method, `deterministic-features-v1`; README.md
/// gives the formulas). `saturate(x, half)` = x / (x + half) maps a rate to 0–1, reaching ½ at `half`.
enum TraitModel {
    static let method = "deterministic-features-v1"

    /// The one line shown wherever traits are (CLI, tools, README): what they are and what each comes from.
    static let caveat =
        "These traits are lexicon heuristics, not a validated psychometric instrument: openness from novelty words and "
        + "questions, conscientiousness from promises kept and weekly regularity, extraversion from social words, "
        + "starting chats and contacts, agreeableness from warm and negative words, neuroticism from negative words "
        + "and exclamations; only your own messages count"

    struct Inputs {
        var stats: ContactStats
        var contactsInScope: Int
    }

    static func saturate(_ x: Double, _ half: Double) -> Double { x <= 0 ? 0 : x / (x + half) }

    static func evaluate(_ input: Inputs) -> (BigFive, Int, [Explanation]) {
        let s = input.stats
        let mine = Double(max(1, s.fromMe))
        func rate(_ c: WordCategory) -> Double { Double(s.myCounts[c.rawValue.trailingZeroBitCount]) / mine }
        let keep = Double(s.promisesKept + 1) / Double(s.promisesKept + s.promisesBroken + 2)
        let weeks = s.myWeeks.count
        let span: Int64 =
            s.myWeeks.isEmpty ? 1 : (s.myWeeks.max() ?? 0) - (s.myWeeks.min() ?? 0) + 1
        let regularity = s.myWeeks.isEmpty ? 0 : Double(weeks) / Double(span)
        let initiation = Double(s.initiated) / mine
        let warmth = rate(.positive) + rate(.endearment)
        let openness = 0.2 + 0.6 * saturate(rate(.novelty), 0.05) + 0.2 * saturate(Double(s.myQuestions) / mine, 0.2)
        let conscientiousness = 0.6 * keep + 0.4 * regularity
        let extraversion =
            0.4 * saturate(rate(.social), 0.03) + 0.3 * min(1, initiation)
            + 0.3 * saturate(Double(input.contactsInScope), 5)
        let agreeableness = 0.2 + 0.5 * saturate(warmth, 0.05) + 0.3 * (1 - saturate(rate(.negative), 0.05))
        let neuroticism =
            0.1 + 0.7 * saturate(rate(.negative), 0.03) + 0.2 * saturate(Double(s.myExclamations) / mine, 0.3)
        let traits = BigFive(
            openness: rounded(openness, 3), conscientiousness: rounded(conscientiousness, 3),
            extraversion: rounded(extraversion, 3), agreeableness: rounded(agreeableness, 3),
            neuroticism: rounded(neuroticism, 3))
        let trust = 0.55 * keep + 0.2 * regularity + 0.15 * agreeableness + 0.1 * (1 - neuroticism)
        let score = max(0, min(100, Int((trust * 100).rounded())))
        func ids(_ key: String) -> [String] { s.examples[key]?.items.map(\.id) ?? [] }
        let explanations = [
            Explanation(
                feature: "promisesKept", value: Double(s.promisesKept),
                effect: "trustworthiness +, conscientiousness +",
                messageIds: ids("promisesKept")),
            Explanation(
                feature: "promisesBroken", value: Double(s.promisesBroken),
                effect: "trustworthiness −, conscientiousness −", messageIds: ids("promisesBroken")),
            Explanation(
                feature: "promiseKeepingRatio", value: rounded(keep, 3), effect: "trustworthiness (55 %)",
                messageIds: ids("promisesMade")),
            Explanation(
                feature: "weeklyRegularity", value: rounded(regularity, 3),
                effect: "trustworthiness (20 %), conscientiousness +", messageIds: []),
            Explanation(
                feature: "warmthRate", value: rounded(warmth, 3), effect: "agreeableness +",
                messageIds: Examples.merged([s.examples["positive"], s.examples["endearment"]].compactMap { $0 })),
            Explanation(
                feature: "negativeRate", value: rounded(rate(.negative), 3), effect: "neuroticism +, agreeableness −",
                messageIds: ids("negative")),
            Explanation(
                feature: "noveltyRate", value: rounded(rate(.novelty), 3), effect: "openness +",
                messageIds: ids("novelty")),
            Explanation(
                feature: "socialRate", value: rounded(rate(.social), 3), effect: "extraversion +",
                messageIds: ids("social")),
            Explanation(
                feature: "initiationRate", value: rounded(initiation, 3), effect: "extraversion +",
                messageIds: ids("initiated")),
            Explanation(
                feature: "financialMessages", value: Double(s.myCounts[0]), effect: "context (promise detection)",
                messageIds: ids("financial")),
        ]
        return (traits, score, explanations)
    }
}
