/// When a step, a field, a jump, a checklist or a fee applies: a test of the answers given so far.
///
/// JSON (see `Resources/Templates/README.md`): `{"field": "x", "equals": "yes"}`, `{"field": "x", "notEquals": "y"}`,
/// `{"field": "x", "in": ["a", "b"]}`, `{"field": "x", "answered": true}`, `{"all": [...]}`, `{"any": [...]}`,
/// `{"not": {...}}`. Values are compared with the answers' normal forms (`yes`, `2026-01-31`, `CA`).
public indirect enum FormCondition: Sendable, Equatable {
    case equals(field: String, value: String)
    case notEquals(field: String, value: String)
    case oneOf(field: String, values: [String])
    case answered(field: String, Bool)
    case all([FormCondition])
    case any([FormCondition])
    case not(FormCondition)

    /// Whether the condition holds for `answers` (field id → normal form). An unanswered field equals nothing and
    /// is "not equal" to nothing either: a condition on a question not yet asked does not hold.
    public func holds(_ answers: [String: String]) -> Bool {
        switch self {
        case .equals(let f, let v): return answers[f] == v
        case .notEquals(let f, let v): return answers[f].map { $0 != v } ?? false
        case .oneOf(let f, let vs): return answers[f].map(vs.contains) ?? false
        case .answered(let f, let flag): return (answers[f] != nil) == flag
        case .all(let cs): return cs.allSatisfy { $0.holds(answers) }
        case .any(let cs): return cs.contains { $0.holds(answers) }
        case .not(let c): return !c.holds(answers)
        }
    }

    /// Every field the condition reads.
    public var fields: [String] {
        switch self {
        case .equals(let f, _), .notEquals(let f, _), .oneOf(let f, _), .answered(let f, _): return [f]
        case .all(let cs), .any(let cs): return cs.flatMap(\.fields)
        case .not(let c): return c.fields
        }
    }
}
