import SanadCore
import SanadStructured

/// Reads free text ("I'm Sara Al-Harbi, born 3 March 1991") into several pending fields at once through a model and
/// constrained decoding (issue 22 item 6). The reply is `{"updates":[{"fieldId","value"}],"nextStepId","notes"}`;
/// `fieldId` is an `enum` of the step's pending fields, so the model cannot name any other field. The proposals are
/// raw text: the engine checks each one like a typed answer (`FormSession.respond(_:model:confirm:)`), and a
/// proposal's `detail` names the model, which the review shows as the evidence.
/// A passage of the person's documents retrieved for a turn (an OCR text chunk from a vector index), with the id
/// the evidence cites (`bill.txt#2 bytes 120-388`).
public struct RetrievedPassage: Sendable, Equatable {
    public var citation: String
    public var text: String
    public var score: Float

    public init(citation: String, text: String, score: Float) {
        self.citation = citation
        self.text = text
        self.score = score
    }
}

/// Finds the passages that bear on the person's text (the CLI: cosine search in `sanad ingest --index`'s file).
public typealias PassageRetriever = @Sendable (String) async throws -> [RetrievedPassage]

public struct ModelAnswerProvider: FormAnswerProvider {
    public let session: any InferenceSession
    /// The model's name in the evidence (`model SmolLM2-135M-Instruct.Q4_1.gguf on pure-swift`).
    public let modelName: String
    /// The chat template to use instead of the model's own (a family or a Jinja file); nil = the model's.
    public let chatTemplate: ChatPromptTemplate?
    public let maxTokens: Int
    /// Retrieves context from the person's documents for each turn; nil = none.
    public let retrieve: PassageRetriever?

    public init(
        session: any InferenceSession, modelName: String, chatTemplate: ChatPromptTemplate? = nil, maxTokens: Int = 160,
        retrieve: PassageRetriever? = nil
    ) {
        self.session = session
        self.modelName = modelName
        self.chatTemplate = chatTemplate
        self.maxTokens = maxTokens
        self.retrieve = retrieve
    }

    public func proposals(for text: String, turn: FormTurn) async throws -> [FormProposal] {
        guard !turn.pending.isEmpty else { return [] }
        let passages = try await retrieve?(text) ?? []
        let messages = Self.messages(for: text, turn: turn, passages: passages)
        let prompt =
            try session.applyChatTemplate(messages, addAssistantPrompt: true, override: chatTemplate)
        let reply = try await StructuredGeneration.generate(
            session: session, prompt: prompt, schema: Self.schema(for: turn),
            parameters: GenerationParameters(maxTokens: maxTokens, sampling: .greedy))
        return Self.cite(Self.proposals(from: reply, turn: turn, evidence: "model \(modelName)"), passages)
    }

    /// Each proposal's evidence with the passages that state its value (case-insensitive): `…; cites bill.txt#2`.
    public static func cite(_ proposals: [FormProposal], _ passages: [RetrievedPassage]) -> [FormProposal] {
        proposals.map { proposal in
            let value = proposal.value.lowercased()
            let sources = passages.filter { !value.isEmpty && $0.text.lowercased().contains(value) }.map(\.citation)
            guard !sources.isEmpty else { return proposal }
            var cited = proposal
            cited.detail += "; cites " + sources.joined(separator: ", ")
            return cited
        }
    }

    /// Core instructions for every form; a template's own system prompt would follow them (the shipped templates
    /// have none).
    static let coreInstructions = """
        You fill in a form from what the person wrote. Reply with JSON only. For each pending field that the text \
        answers, add {"fieldId": ID, "value": VALUE} to "updates", with the value as written in the text (dates as \
        YYYY-MM-DD, yes/no as yes or no, choices by their value). Leave out fields the text does not answer; never \
        invent a value. Put anything unclear in "notes".
        """

    /// The system turn (core instructions) and the user turn: the missing fields with their prompts, types and
    /// choices, the known answers, and the person's text.
    public static func messages(for text: String, turn: FormTurn, passages: [RetrievedPassage] = []) -> [ChatMessage] {
        var lines = ["Form: \(turn.templateID) (language \(turn.language))", "Missing fields:"]
        for q in turn.pending {
            var line = "- \(q.field.id) (\(q.field.type.rawValue)): \(q.prompt)"
            if !q.field.options.isEmpty { line += " [values: \(q.field.options.map(\.value).joined(separator: ", "))]" }
            lines.append(line)
        }
        let known = turn.answers.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        if !known.isEmpty {
            lines.append("Known answers: " + known.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if !passages.isEmpty {
            lines.append("From the person's documents:")
            for (i, p) in passages.enumerated() { lines.append("[\(i + 1)] \(p.text)") }
        }
        if let q = turn.question { lines.append("Question asked: \(q.prompt)") }
        lines.append("Person's text: \(text)")
        return [.system(coreInstructions), .user(lines.joined(separator: "\n"))]
    }

    /// The reply's schema: updates name only pending fields; `nextStepId` is the current step or null.
    public static func schema(for turn: FormTurn) -> JSONValue {
        let ids = turn.pending.map { JSONValue.string($0.field.id) }
        let steps = Array(Set(turn.pending.map(\.stepID))).sorted().map(JSONValue.string) + [.null]
        func string(_ maxLength: Double) -> JSONValue {
            .object(["type": .string("string"), "maxLength": .number(maxLength)])
        }
        func array(_ items: JSONValue, _ maxItems: Int) -> JSONValue {
            .object(["type": .string("array"), "items": items, "maxItems": .number(Double(maxItems))])
        }
        func object(_ properties: [String: JSONValue], _ order: [String]) -> JSONValue {
            .object([
                "type": .string("object"), "properties": .object(properties),
                "required": .array(order.map(JSONValue.string)), "additionalProperties": .bool(false),
                "propertyOrdering": .array(order.map(JSONValue.string)),
            ])
        }
        let update = object(["fieldId": .object(["enum": .array(ids)]), "value": string(120)], ["fieldId", "value"])
        return object(
            [
                "updates": array(update, ids.count), "nextStepId": .object(["enum": .array(steps)]),
                "notes": array(string(120), 2),
            ], ["updates", "nextStepId", "notes"])
    }

    /// The updates of `reply` for pending fields (the first per field), each with `evidence` as its detail.
    public static func proposals(from reply: JSONValue, turn: FormTurn, evidence: String) -> [FormProposal] {
        guard case .array(let updates) = reply["updates"] ?? .null else { return [] }
        let pending = Set(turn.pending.map(\.field.id))
        var seen: Set<String> = []
        return updates.compactMap { update in
            guard let id = update["fieldId"]?.stringValue, let value = update["value"]?.stringValue,
                pending.contains(id), seen.insert(id).inserted
            else { return nil }
            return FormProposal(fieldID: id, value: value, source: .typed, detail: "\(evidence): \(value)")
        }
    }
}
