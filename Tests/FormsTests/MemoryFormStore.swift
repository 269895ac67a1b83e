import FormsPlugin

/// A store in memory for the flow tests (the real stores have their own tests).
final class MemoryFormStore: FormStore {
    var all: [String: SessionRecord] = [:]
    let location = "memory"

    func sessions() throws -> [SessionRecord] { all.values.sorted { $0.id < $1.id } }
    func session(_ id: String) throws -> SessionRecord? { all[id] }
    func create(_ session: SessionRecord) throws { all[session.id] = session }
    func save(_ answer: StoredAnswer, session id: String) throws {
        all[id]?.answers.removeAll { $0.fieldID == answer.fieldID }
        all[id]?.answers.append(answer)
    }
    func remove(field: String, session id: String) throws { all[id]?.answers.removeAll { $0.fieldID == field } }
    func replace(_ session: SessionRecord) throws { all[session.id] = session }
    func delete(session id: String) throws { all[id] = nil }
}
