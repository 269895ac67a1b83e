import Foundation
import SanadCore

/// The engine's state as JSON, for tools and `sanad form --json`.
extension FormQuestion {
    public var json: JSONValue {
        .object([
            "step": .string(stepID), "stepTitle": .string(stepTitle), "fieldId": .string(field.id),
            "type": .string(field.type.rawValue), "prompt": .string(prompt),
            "choices": .array(choices.map(JSONValue.string)), "required": .bool(required),
        ])
    }
}

extension AnswerOutcome {
    public var json: JSONValue {
        switch self {
        case .saved(let field, let value, let reopened):
            return .object([
                "saved": .bool(true), "fieldId": .string(field), "value": .string(value),
                "reopened": .array(
                    reopened.map { .object(["fieldId": .string($0.field), "message": .string($0.message)]) }),
            ])
        case .refused(let p):
            return .object([
                "saved": .bool(false), "fieldId": .string(p.field), "message": .string(p.message),
                "suggestion": .string(p.suggestion),
            ])
        }
    }
}

extension FormProgress {
    public var json: JSONValue {
        .object([
            "answered": .number(Double(answered)), "total": .number(Double(total)), "percent": .number(Double(percent)),
            "steps": .array(
                steps.map {
                    .object(["id": .string($0.id), "title": .string($0.title), "state": .string($0.state.rawValue)])
                }),
        ])
    }
}

extension FormSession {
    /// The session now: id, template, progress, the next question (null when complete).
    public var stateJSON: JSONValue {
        .object([
            "sessionId": .string(id), "templateId": .string(template.metadata.id), "language": .string(language),
            "complete": .bool(isComplete), "progress": progress.json, "question": nextQuestion?.json ?? .null,
        ])
    }
}
