import Foundation

/// A turn answered through a model: what was saved or refused, and why the rules provider took over, if it did.
public struct ModelTurnResult: Sendable {
    /// The outcomes of the model's accepted proposals, or of the rules provider's after a fallback.
    public var outcomes: [AnswerOutcome]
    /// The model's proposals refused by the field checks (nothing of them was saved).
    public var refused: [AnswerProblem]
    /// Set when the rules provider answered instead: for the person ("the model's answer did not validate; …").
    public var notice: String?
}

/// A model that could not be opened (no engine, missing file): every turn falls back to the rules provider with
/// `reason` in the notice.
public struct UnavailableAnswerProvider: FormAnswerProvider {
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public func proposals(for text: String, turn: FormTurn) async throws -> [FormProposal] {
        throw FormError.invalidRequest(reason)
    }
}

extension FormSession {
    /// The person's text through `model`; each proposal is checked like a typed answer first, and the valid ones that
    /// `confirm` returns (with the source to record, e.g. `.modelConfirmed` after the person said yes; nil = not
    /// saved) are saved. When the model throws (no engine, generation failed) or none of its proposals validates,
    /// the rules provider answers the current question and `notice` says so.
    public mutating func respond(
        _ text: String, model: any FormAnswerProvider,
        confirm: (FormProposal) -> FormProposal? = { $0 }
    ) async throws -> ModelTurnResult {
        let proposals: [FormProposal]
        do {
            proposals = try await model.proposals(for: text, turn: turn)
        } catch {
            return try await fallBack(text, refused: [], because: "the model could not answer (\(error))")
        }
        var valid: [FormProposal] = []
        var refused: [AnswerProblem] = []
        for p in proposals {
            switch vet(p) {
            case .success(let value):
                valid.append(FormProposal(fieldID: p.fieldID, value: value, source: p.source, detail: p.detail))
            case .failure(let problem): refused.append(problem)
            }
        }
        guard !valid.isEmpty else {
            let why =
                proposals.isEmpty
                ? "the model proposed no answer" : "the model's answer did not validate"
            return try await fallBack(text, refused: refused, because: why)
        }
        var outcomes: [AnswerOutcome] = []
        for p in valid {
            guard let accepted = confirm(p) else { continue }
            outcomes.append(try apply(accepted))
        }
        return ModelTurnResult(outcomes: outcomes, refused: refused, notice: nil)
    }

    /// The rules provider first: when its answer to the current question passes the field's checks it is saved and
    /// the model is not asked; otherwise the text goes to `model` as in `respond(_:model:confirm:)`. (On the
    /// evaluation set the rules provider is right on one-field answers, the model only helps where they are refused.)
    public mutating func respondRulesFirst(
        _ text: String, model: any FormAnswerProvider,
        confirm: (FormProposal) -> FormProposal? = { $0 }
    ) async throws -> ModelTurnResult {
        let rules = try await RulesAnswerProvider().proposals(for: text, turn: turn)
        if !rules.isEmpty, rules.allSatisfy({ (try? vet($0).get()) != nil }) {
            return ModelTurnResult(outcomes: try rules.map { try apply($0) }, refused: [], notice: nil)
        }
        return try await respond(text, model: model, confirm: confirm)
    }

    /// The normal form of `proposal`'s value when its field is pending now and the value passes the field's checks.
    func vet(_ proposal: FormProposal) -> Result<String, AnswerProblem> {
        guard let q = turn.pending.first(where: { $0.field.id == proposal.fieldID }) else {
            return .failure(
                AnswerProblem(
                    field: proposal.fieldID, message: "\(proposal.fieldID): not a pending field of this step.",
                    suggestion: "Answer the current question."))
        }
        return check(proposal.value, field: q.field)
    }

    mutating func fallBack(_ text: String, refused: [AnswerProblem], because reason: String) async throws
        -> ModelTurnResult
    {
        let outcomes = try await respond(text, provider: RulesAnswerProvider())
        return ModelTurnResult(outcomes: outcomes, refused: refused, notice: "\(reason); used the rules provider")
    }
}
