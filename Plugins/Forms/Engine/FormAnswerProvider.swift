/// A question as the person (or a model) sees it.
public struct FormQuestion: Sendable {
    public var stepID: String
    public var stepTitle: String
    public var field: FormTemplate.Field
    /// The field's `aiPrompt` in the session's language.
    public var prompt: String
    /// `1) Yes, 2) No`, … for select fields; empty otherwise.
    public var choices: [String]
    public var required: Bool
}

/// What a provider sees on a turn: the session, the question asked, every pending field of the step, and the
/// answers so far.
public struct FormTurn: Sendable {
    public var sessionID: String
    public var templateID: String
    public var language: String
    public var question: FormQuestion?
    public var pending: [FormQuestion]
    public var answers: [String: String]
}

/// A proposed answer: raw text for a field, checked and normalised by the engine like a typed answer.
public struct FormProposal: Sendable, Equatable {
    public var fieldID: String
    public var value: String
    public var source: AnswerSource
    /// The document and place, or the model's words (the evidence shown in the review).
    public var detail: String

    public init(fieldID: String, value: String, source: AnswerSource = .typed, detail: String = "") {
        self.fieldID = fieldID
        self.value = value
        self.source = source
        self.detail = detail
    }

    /// A proposal read from a document (`sanad form fill`, the web app's Documents place), its detail naming the
    /// document, the kind and the place in it, and each OCR repair.
    public static func fromDocument(
        fieldID: String, value: String, documentID: String, documentKind: String, sourceField: String,
        repairs: [String]
    ) -> FormProposal {
        let detail = (["\(documentID): \(documentKind), \(sourceField)"] + repairs.map { "repaired: \($0)" })
            .joined(separator: "; ")
        return FormProposal(fieldID: fieldID, value: value, source: .document, detail: detail)
    }
}

/// Turns what the person wrote into proposed answers. The engine checks each proposal like a typed answer and saves
/// the valid ones before acknowledging them.
///
/// `RulesAnswerProvider` needs no model: the text answers the current question. A model provider (issue 22) reads
/// free text into several fields at once; it returns proposals with `source: .modelConfirmed` only for values the
/// person has confirmed.
public protocol FormAnswerProvider: Sendable {
    func proposals(for text: String, turn: FormTurn) async throws -> [FormProposal]
}

/// The text is the answer to the question asked.
public struct RulesAnswerProvider: FormAnswerProvider {
    public init() {}

    public func proposals(for text: String, turn: FormTurn) async throws -> [FormProposal] {
        guard let q = turn.question else { return [] }
        return [FormProposal(fieldID: q.field.id, value: text)]
    }
}
