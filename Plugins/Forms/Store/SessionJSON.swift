import SanadCore

/// Sessions as JSON, for the JSON file store and for backups; read back strictly (every key checked).
extension SessionRecord {
    public var json: JSONValue {
        .object([
            "id": .string(id), "templateId": .string(templateID), "templateVersion": .string(templateVersion),
            "language": .string(language), "createdAt": .string(createdAt),
            "answers": .array(
                answers.map { a in
                    .object([
                        "fieldId": .string(a.fieldID), "value": .string(a.value), "source": .string(a.source.rawValue),
                        "detail": .string(a.detail), "sequence": .number(Double(a.sequence)),
                        "savedAt": .string(a.savedAt),
                    ])
                }),
        ])
    }

    static let keys = ["id", "templateId", "templateVersion", "language", "createdAt", "answers"]
    static let answerKeys = ["fieldId", "value", "source", "detail", "sequence", "savedAt"]

    /// Reads what `json` wrote; `fail(keyPath, problem)` words the error. The id must pass `SessionID` unless
    /// `checkingID` is false (the JSON store reading sessions saved before the rule, so they can still be wiped).
    init(json: JSONValue, path: String, checkingID: Bool = true, fail: (String, String) -> any Error) throws {
        func object(_ v: JSONValue, _ at: String, _ keys: [String]) throws -> [String: JSONValue] {
            guard let o = v.objectValue else { throw fail(at, "expected an object") }
            for k in o.keys.sorted() where !keys.contains(k) { throw fail("\(at).\(k)", "unknown key") }
            return o
        }
        func text(_ o: [String: JSONValue], _ k: String, _ at: String) throws -> String {
            guard let s = o[k]?.stringValue else { throw fail("\(at).\(k)", "missing or not a string") }
            return s
        }
        let o = try object(json, path, Self.keys)
        if checkingID, let problem = SessionID.problem(try text(o, "id", path)) { throw fail("\(path).id", problem) }
        guard let list = o["answers"]?.arrayValue else { throw fail("\(path).answers", "missing or not an array") }
        let answers = try list.enumerated().map { i, item -> StoredAnswer in
            let at = "\(path).answers[\(i)]"
            let a = try object(item, at, Self.answerKeys)
            guard let source = AnswerSource(rawValue: try text(a, "source", at)) else {
                throw fail("\(at).source", "expected typed, document or model-confirmed")
            }
            guard let sequence = a["sequence"]?.intValue, sequence > 0 else {
                throw fail("\(at).sequence", "expected a whole number ≥ 1")
            }
            return StoredAnswer(
                fieldID: try text(a, "fieldId", at), value: try text(a, "value", at), source: source,
                detail: try text(a, "detail", at), sequence: sequence, savedAt: try text(a, "savedAt", at))
        }
        self.init(
            id: try text(o, "id", path), templateID: try text(o, "templateId", path),
            templateVersion: try text(o, "templateVersion", path), language: try text(o, "language", path),
            createdAt: try text(o, "createdAt", path), answers: answers)
    }
}
