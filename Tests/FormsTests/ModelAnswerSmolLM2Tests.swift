import FormsPlugin
import Foundation
import PureSwiftBackend
import SanadCore
import SanadTestSupport
import Testing

// The model provider on a real model (SmolLM2-135M-Instruct, pure-Swift engine). Model output differs across CPUs,
// so only behaviour that holds for any output is asserted: what is saved is a field pending at the turn, in the
// field's normal form, with the model named in its evidence; or the rules provider took over with a notice.
@Suite(
    "Model answer provider on SmolLM2", .serialized,
    .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
struct ModelAnswerSmolLM2Tests {
    @Test("every saved update is a pending field with a valid value, or the rules provider answered with a notice")
    func savedUpdatesArePendingAndValid() async throws {
        let url = try #require(TestPaths.model(TestPaths.smolLM2))
        let session = try PureSwiftSession(path: url.path, options: ModelLoadOptions(threads: 2, contextLength: 2048))
        let provider = ModelAnswerProvider(session: session, modelName: TestPaths.smolLM2, maxTokens: 96)
        let set = try FormEvalSetTests.load()
        let catalog = try FormCatalog.bundled()
        let directory = try TestPaths.temporaryDirectory()
        let validator = FieldValidator(today: set.today)
        for c in set.cases where ["dmv-identity-01", "dmv-address-17", "ds-identity-48"].contains(c.id) {
            var s = try set.session(for: c, catalog: catalog, directory: directory)
            let pending = Dictionary(uniqueKeysWithValues: s.turn.pending.map { ($0.field.id, $0.field) })
            let before = s.record.answers.count
            let result = try await s.respond(c.text, model: provider)
            let added = s.record.answers.dropFirst(before)
            for answer in added {
                let field = try #require(pending[answer.fieldID], "\(c.id): \(answer.fieldID) was not pending")
                #expect(validator.normalize(answer.value, for: field) == .success(answer.value), "\(c.id)")
                if result.notice == nil { #expect(answer.detail.hasPrefix("model \(TestPaths.smolLM2)")) }
            }
            if let notice = result.notice { #expect(notice.hasSuffix("; used the rules provider")) }
        }
    }
}
