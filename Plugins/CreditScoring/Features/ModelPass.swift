import SanadCore
import SanadStructured

/// What the model says about one prioritised message.
public struct MessageLabel: Sendable, Equatable {
    /// `none`, `request` (asks for money), `promise` (promises to pay), `repayment` (says it paid), `refusal`
    /// (refuses or fails to pay).
    public var financial: String
    /// `positive`, `neutral`, `negative`.
    public var tone: String

    public init(financial: String, tone: String) {
        self.financial = financial
        self.tone = tone
    }
}

/// The model pass (`model-labels-v1`): the tier's language model labels each prioritised message through the
/// structured-output API (the answer is constrained to the label schema, greedy, so the same engine and model give
/// the same labels), and the labels move the deterministic score by a bounded amount. The texts go to the model on
/// the device only; the record keeps the counts, the adjustment and the message ids.
public enum ModelPass {
    public static let method = "model-labels-v1"
    public static let financial = ["none", "request", "promise", "repayment", "refusal"]
    public static let tones = ["positive", "neutral", "negative"]
    /// The most the labels move the trustworthiness score, either way.
    public static let maximumAdjustment = 10

    /// The label schema: `{"financial": one of `financial`, "tone": one of `tones`}`.
    public static let schema: JSONValue = .object([
        "type": .string("object"),
        "properties": .object([
            "financial": .object(["enum": .array(financial.map(JSONValue.string))]),
            "tone": .object(["enum": .array(tones.map(JSONValue.string))]),
        ]),
        "required": .array([.string("financial"), .string("tone")]), "additionalProperties": .bool(false),
    ])

    /// The prompt (version `model-labels-v1`) for one message.
    public static func messages(for text: String) -> [ChatMessage] {
        [
            .system(
                "You label one chat message for a credit analysis. financial: request if it asks for money, promise "
                    + "if the writer promises to pay, repayment if the writer says they paid or returned money, refusal "
                    + "if the writer refuses or fails to pay, else none. tone: positive, neutral or negative. Reply "
                    + "with JSON only."),
            .user(String(text.prefix(500))),
        ]
    }

    /// Labels every text in order, greedy, at most 48 tokens each (a label takes about 12; the schema constraint
    /// promises to close the document only when the limit holds its shortest form one byte per token, 37).
    public static func label(_ texts: [String], session: any InferenceSession) async throws -> [MessageLabel] {
        let constraint = try SchemaConstraint(schema: schema)
        let parameters = GenerationParameters(
            maxTokens: 48, sampling: SamplingParameters(temperature: 0, topK: 0, topP: 1, minP: 0))
        var labels: [MessageLabel] = []
        for text in texts {
            let prompt = try session.applyChatTemplate(messages(for: text), addAssistantPrompt: true)
            let value = try await StructuredGeneration.generate(
                session: session, prompt: prompt, constraint: constraint, parameters: parameters)
            labels.append(
                MessageLabel(
                    financial: value["financial"]?.stringValue ?? "none", tone: value["tone"]?.stringValue ?? "neutral")
            )
        }
        return labels
    }

    /// `result` with the labels folded in: the adjustment is
    /// `round(maximumAdjustment × (repayment + promise/2 − refusal − negative/2) / labelled)`, clamped to
    /// ±`maximumAdjustment` and the score to 0…100; counts `modelLabelled`, `modelRequest`, `modelPromise`,
    /// `modelRepayment`, `modelRefusal`, `modelPositive`, `modelNegative`; an explanation `model labels` citing the
    /// ids of the messages that moved it; `method` becomes `<deterministic>+model-labels-v1`.
    public static func combine(_ result: AnalysisResult, labels: [MessageLabel]) -> AnalysisResult {
        var out = result
        let ids = Array(result.prioritised.prefix(labels.count))
        func count(_ f: (MessageLabel) -> Bool) -> Int { labels.filter(f).count }
        let repayment = count { $0.financial == "repayment" }
        let promise = count { $0.financial == "promise" }
        let refusal = count { $0.financial == "refusal" }
        let negative = count { $0.tone == "negative" }
        let positive = count { $0.tone == "positive" }
        let raw = Double(repayment) + Double(promise) / 2 - Double(refusal) - Double(negative) / 2
        let adjustment =
            labels.isEmpty
            ? 0
            : max(
                -maximumAdjustment,
                min(maximumAdjustment, Int((Double(maximumAdjustment) * raw / Double(labels.count)).rounded())))
        out.trustworthiness = max(0, min(100, result.trustworthiness + adjustment))
        out.method = result.method + "+" + method
        out.counts["modelLabelled"] = labels.count
        out.counts["modelRequest"] = count { $0.financial == "request" }
        out.counts["modelPromise"] = promise
        out.counts["modelRepayment"] = repayment
        out.counts["modelRefusal"] = refusal
        out.counts["modelPositive"] = positive
        out.counts["modelNegative"] = negative
        let cited = zip(ids, labels).filter { $0.1.financial != "none" || $0.1.tone != "neutral" }.map(\.0)
        out.explanations.append(
            Explanation(
                feature: "model labels", value: Double(adjustment),
                effect: adjustment == 0 ? "trustworthiness unchanged" : "trustworthiness \(adjustment > 0 ? "+" : "−")",
                messageIds: Array(cited.prefix(5))))
        return out
    }
}
