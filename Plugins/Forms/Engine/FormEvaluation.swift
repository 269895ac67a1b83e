import Foundation
import SanadCore

/// The free-text evaluation set (issue 22 item 7): utterances answered at a point of a form, with the field values
/// expected after the engine's checks; and field-level precision and recall of a provider over them.
public struct FormEvalSet: Sendable {
    public struct Case: Sendable {
        public var id: String
        public var templateID: String
        public var language: String
        /// Answers given before the utterance, answered in the flow's order until the current question.
        public var given: [String: String]
        /// The field asked when the utterance is typed.
        public var current: String
        public var text: String
        /// Field id → value as the validators normalise it.
        public var expected: [String: String]
    }

    public var today: CivilDate
    public var cases: [Case]

    /// Reads `utterances.json`: `today`, `contexts` (name → `template`, `given`) and `utterances` (`id`,
    /// `context`, `language`, `current`, `text`, `expected`).
    public static func load(_ data: Data, file: String) throws -> FormEvalSet {
        func bad(_ problem: String) -> FormError { .invalidRequest("\(file): \(problem)") }
        guard let root = try? StrictJSON().parse(Array(data)) else { throw bad("is not JSON") }
        guard let todayText = root["today"]?.stringValue, let today = CivilDate(iso: todayText) else {
            throw bad("'today' must be a date YYYY-MM-DD")
        }
        guard case .object(let contexts) = root["contexts"] ?? .null,
            case .array(let items) = root["utterances"] ?? .null
        else { throw bad("needs 'contexts' (an object) and 'utterances' (an array)") }
        let cases = try items.enumerated().map { (n, item) -> Case in
            let id = item["id"]?.stringValue ?? "utterances[\(n)]"
            guard let name = item["context"]?.stringValue, let context = contexts[name],
                let template = context["template"]?.stringValue
            else { throw bad("\(id): 'context' must name an entry of 'contexts' that has a 'template'") }
            guard let language = item["language"]?.stringValue, let current = item["current"]?.stringValue,
                let text = item["text"]?.stringValue, let expected = strings(item["expected"])
            else { throw bad("\(id): needs 'language', 'current', 'text' and 'expected' (field → value)") }
            return Case(
                id: id, templateID: template, language: language, given: strings(context["given"]) ?? [:],
                current: current, text: text, expected: expected)
        }
        return FormEvalSet(today: today, cases: cases)
    }

    static func strings(_ value: JSONValue?) -> [String: String]? {
        guard case .object(let map) = value ?? .null else { return nil }
        var out: [String: String] = [:]
        for (k, v) in map {
            guard let s = v.stringValue else { return nil }
            out[k] = s
        }
        return out
    }

    /// A session of `c`'s template, in a store under `directory`, with the given answers saved: its current
    /// question is `c.current` (or the error names the case).
    public func session(for c: Case, catalog: FormCatalog, directory: URL) throws -> FormSession {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try JSONFormStore(file: directory.appendingPathComponent("\(c.id).json"))
        var s = try FormSession.start(
            template: try catalog.template(c.templateID), store: store, language: c.language, id: c.id, today: today)
        while let q = s.nextQuestion, let value = c.given[q.field.id] {
            if case .refused(let p) = try s.apply(FormProposal(fieldID: q.field.id, value: value)) {
                throw FormError.invalidRequest("\(c.id): the given answer \(q.field.id)='\(value)' is refused: \(p)")
            }
        }
        guard s.nextQuestion?.field.id == c.current else {
            throw FormError.invalidRequest(
                "\(c.id): after the given answers the question is \(s.nextQuestion?.field.id ?? "none"), not "
                    + "\(c.current); fix the context's 'given' answers")
        }
        return s
    }
}

/// Field-level counts over an evaluation set.
public struct FormEvalScore: Sendable, Equatable {
    public var truePositives = 0
    public var falsePositives = 0
    public var falseNegatives = 0
    /// Turns where the rules provider took over from the model.
    public var fallbacks = 0
    public var utterances = 0

    public init() {}

    public var precision: Double {
        truePositives + falsePositives == 0 ? 0 : Double(truePositives) / Double(truePositives + falsePositives)
    }
    public var recall: Double {
        truePositives + falseNegatives == 0 ? 0 : Double(truePositives) / Double(truePositives + falseNegatives)
    }
    public var f1: Double { precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall) }

    /// Counts the answers saved by the turn (`saved`, field → value) against `expected`.
    public mutating func add(saved: [String: String], expected: [String: String]) {
        utterances += 1
        let correct = saved.filter { expected[$0.key] == $0.value }.count
        truePositives += correct
        falsePositives += saved.count - correct
        falseNegatives += expected.count - correct
    }
}

/// Scores over the whole set and over two slices: utterances that answer just the question asked (where the rules
/// provider is built to be right) and the others (several fields, or a field other than the one asked).
public struct FormEvalScores: Sendable, Equatable {
    public var all = FormEvalScore()
    public var oneField = FormEvalScore()
    public var otherwise = FormEvalScore()

    public init() {}

    mutating func add(_ c: FormEvalSet.Case, saved: [String: String], fellBack: Bool) {
        let direct = c.expected.count == 1 && c.expected[c.current] != nil
        for path in [\FormEvalScores.all, direct ? \.oneField : \.otherwise] {
            self[keyPath: path].add(saved: saved, expected: c.expected)
            if fellBack { self[keyPath: path].fallbacks += 1 }
        }
    }
}

extension FormEvalSet {
    /// Scores `answer` (a turn: the session and the text; returns whether the rules provider took over) over every
    /// case; `progress` is told each case's id and the answers it saved.
    public func score(
        catalog: FormCatalog, directory: URL,
        answer: (inout FormSession, String) async throws -> Bool,
        progress: (Case, [String: String]) -> Void = { _, _ in }
    ) async throws -> FormEvalScores {
        var scores = FormEvalScores()
        for c in cases {
            var s = try session(for: c, catalog: catalog, directory: directory)
            let before = s.storedAnswers
            let fellBack = try await answer(&s, c.text)
            let saved = s.storedAnswers.filter { before[$0.key] != $0.value }
            scores.add(c, saved: saved, fellBack: fellBack)
            progress(c, saved)
        }
        return scores
    }
}
