/// The flow as it stands for a set of answers: which steps are part of it (their `showIf` holds and no jump passed
/// over them) and which of their fields are asked (their condition in `conditionalLogic.fields` holds).
///
/// Conditions see only the answers of fields that are themselves part of the flow and come earlier in it (the
/// loader checks that conditions name earlier fields), so an answer left behind by a changed branch never steers
/// the flow.
public struct FormFlow: Sendable {
    public struct VisibleStep: Sendable {
        public var step: FormTemplate.Step
        public var fields: [FormTemplate.Field]
    }

    public var steps: [VisibleStep]
    /// The answers that count: field id → normal form, for the fields in the flow only.
    public var answers: [String: String]

    public init(template: FormTemplate, answers stored: [String: String]) {
        var steps: [VisibleStep] = []
        var effective: [String: String] = [:]
        let index = Dictionary(
            template.steps.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        var i = 0
        while i < template.steps.count {
            let step = template.steps[i]
            if let show = step.conditionalLogic.showIf, !show.holds(effective) {
                i += 1
                continue
            }
            var fields: [FormTemplate.Field] = []
            for id in step.expectedFields {
                guard let field = template.field(id) else { continue }
                if let condition = step.conditionalLogic.fields[id], !condition.holds(effective) { continue }
                fields.append(field)
                if let value = stored[id] { effective[id] = value }
            }
            steps.append(VisibleStep(step: step, fields: fields))
            // Jumps only go forward (the loader refuses others), so the walk ends.
            let jump = step.conditionalLogic.next.first { $0.when.holds(effective) }
            i = jump.flatMap { index[$0.goto] }.map { max($0, i + 1) } ?? i + 1
        }
        self.steps = steps
        self.answers = effective
    }

    /// Every field in the flow, in order.
    public var fields: [FormTemplate.Field] { steps.flatMap(\.fields) }

    /// The first step with a field not yet answered, and those fields; nil when every field is answered.
    public var current: (step: FormTemplate.Step, pending: [FormTemplate.Field])? {
        for s in steps {
            let pending = s.fields.filter { answers[$0.id] == nil }
            if !pending.isEmpty { return (s.step, pending) }
        }
        return nil
    }
}
